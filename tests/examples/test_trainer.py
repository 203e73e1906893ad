"""The reference trainer (examples/training-job/trainer/train.py) in a real process: SIGTERM mid-run
finishes the step, writes a checkpoint atomically and exits non-zero; the next run resumes from it and
ends exactly where an uninterrupted run ends; a torn checkpoint is skipped."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

from tests.examples.test_examples import EXAMPLES

TRAINER = EXAMPLES / "training-job" / "trainer" / "train.py"
STEPS = ["--steps", "400", "--step-seconds", "0.005", "--checkpoint-every-seconds", "0.1"]


def run(directory, *extra, timeout=60, python=sys.executable):
    result = subprocess.run(
        [str(python), str(TRAINER), "--checkpoint-dir", str(directory), *STEPS, *extra],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return result


def final(output: str) -> dict:
    return json.loads(output.strip().splitlines()[-1])


def test_an_interrupted_run_resumes_to_the_same_result_as_an_uninterrupted_one(tmp_path):
    interrupt_and_resume(tmp_path, sys.executable)


def interrupt_and_resume(tmp_path, python):
    """A whole run, and a run stopped by SIGTERM mid-way then started again, with `python`: the same end."""
    whole = run(tmp_path / "whole", python=python)
    assert whole.returncode == 0
    interrupted = tmp_path / "interrupted"
    process = subprocess.Popen(
        [str(python), str(TRAINER), "--checkpoint-dir", str(interrupted), *STEPS], stdout=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 30
    while not list(interrupted.glob("checkpoint-*.json")) and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=30)
    assert process.returncode == 143 and "checkpoint written" in output
    stopped_at = max(int(p.stem.split("-")[1]) for p in interrupted.glob("checkpoint-*.json"))
    assert 0 < stopped_at < 400
    (interrupted / ".checkpoint-x.tmp").write_text('{"half": ')  # a write cut off: never read
    resumed = run(interrupted, python=python)
    assert resumed.returncode == 0 and f"resuming at step {stopped_at}" in resumed.stdout
    assert final(resumed.stdout) == final(whole.stdout)


def test_a_checkpoint_whose_checksum_fails_is_skipped_for_the_one_before(tmp_path):
    assert run(tmp_path, "--steps", "50").returncode == 0
    checkpoints = sorted(tmp_path.glob("checkpoint-*.json"))
    newest = checkpoints[-1]
    document = json.loads(newest.read_text())
    document["payload"] = document["payload"].replace('"step": ', '"step": 9')  # damaged: its checksum fails
    newest.write_text(json.dumps(document))
    result = run(tmp_path, "--steps", "60")
    previous = int(checkpoints[-2].stem.split("-")[1])
    assert f"resuming at step {previous}" in result.stdout and result.returncode == 0
