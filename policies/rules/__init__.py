"""Every rule of the pack, one per module: each public module here holds one `RULE`, named as its module
(dashes for underscores), found by listing the package. Adding a rule is adding its module, its fixture
(tests/fixtures/policies/<rule>.json) and its golden messages; tests/policies/test_rules.py fails until
all three exist. Modules named `_...` are helpers the rules share."""

import importlib
import pkgutil

from policies.framework import Rule


def _discovered() -> list[Rule]:
    modules = sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))
    return [importlib.import_module(f"{__name__}.{name}").RULE for name in modules]


ALL_RULES = _discovered()
