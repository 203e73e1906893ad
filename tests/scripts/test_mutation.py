"""The mutation script's reading of mutmut's results: a mutant is killed by a failure, survives when its
tests pass or no test reaches it, is counted apart when its tests time out, and is not counted while it
has not run."""

import importlib.util
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def script():
    spec = importlib.util.spec_from_file_location("mutation_script", REPO / "scripts" / "mutation.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_verdicts_per_module_from_mutmuts_result_files(tmp_path):
    meta = tmp_path / "mutants" / "components" / "cost" / "gate.py.meta"
    meta.parent.mkdir(parents=True)
    meta.write_text(json.dumps({"exit_code_by_key": {"a": 1, "b": 0, "c": 33, "d": 36, "e": None, "f": 34, "g": -24}}))
    verdicts = script().verdicts(tmp_path)
    assert dict(verdicts["components/cost/gate.py"]) == {"killed": 2, "survived": 2, "not run": 2, "timed out": 1}


def test_every_package_names_modules_and_tests_that_exist():
    for package, (modules, tests) in script().PACKAGES.items():
        for pattern in modules:
            assert list(REPO.glob(pattern)), (package, pattern)
        for path in tests:
            assert (REPO / path).exists(), (package, path)


def test_a_sample_is_drawn_from_every_mutant_generated_in_a_stable_order(tmp_path):
    mutation = script()
    for module, keys in (("a.py", ["m.x_f__mutmut_2", "m.x_f__mutmut_1"]), ("b/c.py", ["n.x_g__mutmut_1"])):
        meta = tmp_path / "mutants" / f"{module}.meta"
        meta.parent.mkdir(parents=True, exist_ok=True)
        meta.write_text(json.dumps({"exit_code_by_key": {key: None for key in keys}}))
    names = mutation.mutant_names(tmp_path)
    assert names == ["m.x_f__mutmut_1", "m.x_f__mutmut_2", "n.x_g__mutmut_1"]


def test_a_samples_interval_is_wilsons_and_never_collapses_at_every_mutant_killed():
    wilson = script().wilson
    low, high = wilson(60, 60)
    assert (round(low, 3), round(high, 3)) == (0.940, 1.0)
    low, high = wilson(45, 50)  # 90 %: about 78.6 % to 95.7 %
    assert (round(low, 3), round(high, 3)) == (0.786, 0.957)


def test_timed_out_mutants_are_rerun_alone_and_judged_by_their_own_tests(tmp_path):
    """A mutant that timed out under mutmut is judged again by the tests that reach it, chosen by
    MUTANT_UNDER_TEST: failing tests kill it, passing ones let it survive, and one that runs past the limit
    stays timed out. Other verdicts are left as they were."""
    mutants = tmp_path / "mutants"
    mutants.mkdir()
    (mutants / "test_probe.py").write_text(
        "import os, time\n"
        "def test_probe():\n"
        "    name = os.environ['MUTANT_UNDER_TEST']\n"
        "    if name.endswith('_3'):\n"
        "        time.sleep(60)\n"
        "    assert not name.endswith('_1')\n"
        "def test_elsewhere():\n"
        "    raise AssertionError('reaches no mutant: never run')\n"
    )
    (mutants / "mutmut-stats.json").write_text(
        json.dumps({"tests_by_mangled_function_name": {"m.x_f": ["test_probe.py::test_probe"]}})
    )
    meta = mutants / "m.py.meta"
    meta.write_text(
        json.dumps(
            {
                "exit_code_by_key": {
                    "m.x_f__mutmut_1": -24,
                    "m.x_f__mutmut_2": -24,
                    "m.x_f__mutmut_3": -24,
                    "m.x_f__mutmut_4": 0,
                }
            }
        )
    )
    outcome = script().rerun_alone(tmp_path, dict(os.environ), limit_s=10)
    assert dict(outcome) == {"killed": 1, "survived": 1, "timed out": 1}
    codes = json.loads(meta.read_text())["exit_code_by_key"]
    assert codes["m.x_f__mutmut_1"] not in (0, -24) and codes["m.x_f__mutmut_2"] == 0
    assert codes["m.x_f__mutmut_3"] == -24 and codes["m.x_f__mutmut_4"] == 0
