"""What a rule is, how it runs over a plan, and how it becomes a CrossGuard policy.

A rule is pure: it reads `PlanResource`s and its config and yields messages. `run_rules` applies
defaults (the SDK does not fill them; the CLI does for the pack, and we do here too) and the
environment's enforcement levels, and returns violations; `to_crossguard` wraps a rule for the
Pulumi policy SDK without starting it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from components.plan.resources import PlanResource
from components.plan.unknowns import UnknownValueError, as_read, preview_message, read_plan

CONFIG_DIR = Path(__file__).parent / "config"
Level = Literal["advisory", "mandatory", "disabled"]
ResourceCheck = Callable[[PlanResource, Mapping[str, Any]], Iterable[str]]
StackCheck = Callable[[Sequence[PlanResource], Mapping[str, Any]], Iterable[tuple[str | None, str]]]


@dataclass(frozen=True)
class Rule:
    name: str  # <provider>-<service>-<resource>-<verb>-<what>
    description: str
    severity: Literal["low", "medium", "high", "critical"]
    remediation: str
    topics: tuple[str, ...]
    config: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # JSON-schema properties with defaults
    check_resource: ResourceCheck | None = None
    check_stack: StackCheck | None = None
    # The resource types check_resource can judge (None: every type). `seedance check` asks it of those
    # only; the check still tests the type itself, so the pack judges the same under the engine.
    resource_types: frozenset[str] | None = None
    # Without resource_types: the prefix of every type check_resource can judge ("aws:"), likewise, and the
    # suffix ("Patch": the kinds are open-ended).
    type_prefix: str | None = None
    type_suffix: str | None = None
    # The benchmark items a security rule enforces ("CIS EKS 5.4.1"), or the EKS Best Practices Guide
    # section where the benchmark has none (docs/security.md maps them).
    standards: tuple[str, ...] = ()

    def judges(self, token: str) -> bool:
        """Whether check_resource can find anything in a resource of this type."""
        if self.resource_types is not None:
            return token in self.resource_types
        return token.startswith(self.type_prefix or "") and token.endswith(self.type_suffix or "")

    @property
    def narrowed(self) -> bool:
        """Whether check_resource judges some types only (`judges` says which)."""
        return self.resource_types is not None or self.type_prefix is not None or self.type_suffix is not None

    def defaults(self) -> dict[str, Any]:
        return {key: schema["default"] for key, schema in self.config.items() if "default" in schema}


@dataclass(frozen=True)
class Violation:
    policy: str
    level: Level
    urn: str | None
    message: str
    remediation: str
    # "finding": the rule judged; "preview": it read a value unknown until apply (the SDK's advisory).
    kind: Literal["finding", "preview"] = "finding"

    def to_json(self) -> dict:
        return {"policy": self.policy, "level": self.level, "urn": self.urn, "message": self.message}


PACK_NAME = "seedance-cost-policies"
# What the Python SDK reports as the pack's version in its own messages (the CLI uses PulumiPolicy.yaml's).
PACK_VERSION = "0.0.1"
# A stack whose name is not an environment gets the strictest environment's rules.
STRICTEST_ENV = "prod"


def load_enforcement(env: str) -> dict[str, Any]:
    """policies/config/<env>.json, the same file `pulumi preview --policy-pack-config` reads."""
    path = CONFIG_DIR / f"{env}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def fails_closed(env: str) -> bool:
    """Whether the gate fails a mandatory rule that cannot decide on an unknown value (prod) or advises.
    A plan the gate checks offline knows every value; one with unknowns is a preview's or an edited file."""
    return env == STRICTEST_ENV


def pack_enforcement(stack: str) -> dict[str, Any]:
    """The pack's own defaults for a stack: its environment's file, else the strictest one."""
    return load_enforcement(stack) or load_enforcement(STRICTEST_ENV)


ENFORCEMENT_LEVELS = ("advisory", "mandatory", "remediate", "disabled")


class PolicyConfigError(ValueError):
    """A policy-pack config value the engine would refuse (`pulumi preview` stops on it too)."""


def _valid_level(where: str, level: Any) -> Level:
    if level not in ENFORCEMENT_LEVELS:
        raise PolicyConfigError(f"{where} = {json.dumps(level)}: allowed: {', '.join(ENFORCEMENT_LEVELS)}")
    return level


def rule_settings(rule: Rule, enforcement: Mapping[str, Any]) -> tuple[Level, dict[str, Any]]:
    """The rule's level and its config with defaults, from a policy-pack config document, validated as
    the engine validates it before it configures the pack: levels from the engine's four, config
    values against the policy's own JSON schema."""
    level: Level = _valid_level("all", enforcement.get("all", "advisory"))
    entry = enforcement.get(rule.name)
    config = rule.defaults()
    if isinstance(entry, str):
        level = _valid_level(rule.name, entry)
    elif isinstance(entry, Mapping):
        level = _valid_level(f"{rule.name}.enforcementLevel", entry.get("enforcementLevel", level))
        config.update({k: v for k, v in entry.items() if k != "enforcementLevel"})
    elif entry is not None:
        raise PolicyConfigError(f"{rule.name} = {json.dumps(entry)}: allowed: an enforcement level or an object")
    validate_config(rule, config)
    return level, config


_VALIDATORS: dict[str, Any] = {}  # a rule's config schema, compiled once per process


def validate_config(rule: Rule, config: Mapping[str, Any]) -> None:
    import jsonschema

    validator = _VALIDATORS.get(rule.name)
    if validator is None:
        schema = {"type": "object", "properties": {k: dict(v) for k, v in rule.config.items()}}
        validator = _VALIDATORS[rule.name] = jsonschema.Draft7Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(dict(config)))
    if error is not None:
        key = ".".join(str(part) for part in error.absolute_path)
        raise PolicyConfigError(f"{rule.name}.{key} = {json.dumps(error.instance)}: {error.message}")


def resource_findings(rule: Rule, resource: PlanResource, config: Mapping[str, Any]) -> list[str]:
    """The rule's messages for one resource; UnknownValueError when it read a value unknown until apply."""
    assert rule.check_resource is not None
    return list(rule.check_resource(as_read(resource), config))


def stack_findings(
    rule: Rule, resources: Sequence[PlanResource], config: Mapping[str, Any]
) -> list[tuple[str | None, str]]:
    assert rule.check_stack is not None
    return list(rule.check_stack([as_read(r) for r in resources], config))


def run_rules(
    rules: Sequence[Rule],
    resources: Sequence[PlanResource],
    enforcement: Mapping[str, Any],
    extra_config: Mapping[str, Mapping[str, Any]] | None = None,
    unknowns: Literal["advisory", "fail"] = "advisory",
) -> list[Violation]:
    """Violations as the engine would report them, including its advisory for a rule that read an
    unknown at preview (the same wording, so both paths say the same). `unknowns="fail"` (prod): a
    mandatory rule that cannot decide fails closed, naming the value it could not read."""
    violations = []
    read = read_plan(resources)  # once for every rule: rules only read
    positions = read.positions()  # each type's resources, in plan order: a rule reads only its types
    for rule in rules:
        level, config = rule_settings(rule, enforcement)
        config.update((extra_config or {}).get(rule.name, {}))
        if level == "disabled":
            continue
        closed = unknowns == "fail" and level == "mandatory"
        if rule.check_resource is not None:
            judged = (
                read
                if not rule.narrowed
                else [
                    read[i]
                    for i in sorted(i for token, found in positions.items() if rule.judges(token) for i in found)
                ]
            )
            judge = rule.check_resource
            for resource in judged:
                try:
                    messages = list(judge(resource, config))
                except UnknownValueError as error:
                    violations.append(_preview_advisory(rule, closed, resource.urn, error))
                    continue
                if messages:  # most resources meet most rules
                    violations += [Violation(rule.name, level, resource.urn, m, rule.remediation) for m in messages]
        if rule.check_stack is not None:
            try:
                found = list(rule.check_stack(read, config))
            except UnknownValueError as error:
                violations.append(_preview_advisory(rule, closed, None, error))
            else:
                violations += [Violation(rule.name, level, urn, m, rule.remediation) for urn, m in found]
    return violations


def _preview_advisory(rule: Rule, closed: bool, urn: str | None, error: UnknownValueError) -> Violation:
    """A rule that read an unknown: advisory, or mandatory where the environment fails `closed`."""
    return Violation(
        rule.name,
        "mandatory" if closed else "advisory",
        urn,
        preview_message(rule.name, PACK_NAME, PACK_VERSION, error)
        + ("; this environment fails closed on what it cannot check" if closed else ""),
        rule.remediation,
        kind="preview",
    )


def _plain(value: Any) -> Any:
    """A policy SDK value without its unknown-checking proxies (our `checking` containers take their
    place; `_as_sdk_unknown` turns what they raise into the SDK's own error, which the SDK reports as its
    preview advisory)."""
    for attribute in ("_DictProxy__target", "_ListProxy__target"):
        if hasattr(value, attribute):
            value = getattr(value, attribute)
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_plain(v) for v in value]
    return value


def _resource(args: Any) -> PlanResource:
    """A policy SDK resource as a plan resource. Stack policies get each resource's dependencies (the
    engine's links between resources, e.g. a group and its launch template)."""
    depends = [d.urn for d in getattr(args, "dependencies", None) or []]
    depends += [d.urn for ds in (getattr(args, "property_dependencies", None) or {}).values() for d in ds]
    return PlanResource(
        urn=args.urn,
        type=args.resource_type,
        name=args.name,
        props=_plain(args.props),
        dependencies=tuple(dict.fromkeys(depends)),
    )


@contextlib.contextmanager
def _as_sdk_unknown():
    """Inside the policy SDK, an unknown read is the SDK's own error: the SDK turns it into its advisory.
    The pack never fails closed: `pulumi up` runs each policy again with the values known, before the
    resource is created, so a fresh account's first preview (full of unknown ids) is not blocked."""
    from pulumi_policy.proxy import UnknownValueError as SdkUnknownValueError

    try:
        yield
    except UnknownValueError as error:
        raise SdkUnknownValueError(error.sentinel, error.path) from None


def to_crossguard(
    rule: Rule, enforcement: Mapping[str, Any] | None = None, expected: Mapping[str, Any] | None = None
) -> Any:
    """The rule as a `pulumi_policy` policy (importing the SDK only here: it is needed only by the pack),
    with its level and config defaults from `enforcement` (a policy-pack config document), over which
    `expected` (what the stack config expects, as `run_rules`' extra config) is laid: the engine applies
    those when no --policy-pack-config is given."""
    import pulumi_policy as sdk

    level, defaults = rule_settings(rule, enforcement or {})
    defaults.update(expected or {})
    properties = {k: {**v, **({"default": defaults[k]} if k in defaults else {})} for k, v in rule.config.items()}
    schema = sdk.PolicyConfigSchema(properties=properties) if rule.config else None
    common: dict[str, Any] = dict(
        description=rule.description,
        config_schema=schema,
        severity=sdk.Severity(rule.severity),
        remediation_steps=rule.remediation,
        tags=list(rule.topics),
        enforcement_level=sdk.EnforcementLevel(level),
    )

    def configured(args: Any) -> dict:
        return {**defaults, **dict(args.get_config() or {})}

    if rule.check_resource is not None:

        def validate_resource(args, report_violation):
            with _as_sdk_unknown():
                for message in resource_findings(rule, _resource(args), configured(args)):
                    report_violation(message, None)

        return sdk.ResourceValidationPolicy(name=rule.name, validate=validate_resource, **common)

    def validate_stack(args, report_violation):
        resources = [_resource(r) for r in args.resources]
        with _as_sdk_unknown():
            for urn, message in stack_findings(rule, resources, configured(args)):
                report_violation(message, urn)

    return sdk.StackValidationPolicy(name=rule.name, validate=validate_stack, **common)
