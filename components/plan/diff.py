"""What a change between two plans does to the running system: created, updated in place, replaced
or deleted resources, and for each GPU Auto Scaling group whether an instance refresh starts and
which nodes it replaces. Pure: reads two plans' resources (`seedance plan --json`).

The node rules are the provider's and Auto Scaling's (see components/compute/rollout.py): a refresh
starts when the group's launch template version or mixed instances policy changes; with skip matching
it replaces the nodes whose launch template version or instance type the new configuration does not
have; without it, every node. A launch template gets a new version when any input but its tags or
default-version switches changes (its description is the version's) (the offline plan's version number never
moves, so the template's own inputs are compared).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from components.plan.replacement import refused_changes, replaced_by
from components.plan.resources import ASG, LAUNCH_TEMPLATE, MASK, PlanResource, holds_masked, is_unknown

Action = Literal["create", "update", "replace", "delete"]
SYMBOLS = {"create": "+", "update": "~", "replace": "+-", "delete": "-"}
# Launch template inputs that change the template resource but not its launch data (no new version).
_UNVERSIONED = ("tags", "tagsAll", "updateDefaultVersion", "defaultVersion")
_POLICY = "mixedInstancesPolicy"
_DISTRIBUTION = f"{_POLICY}.instancesDistribution"


@dataclass(frozen=True)
class NodeEffect:
    refresh: bool  # an instance refresh starts
    replaces: Literal["none", "all", "types"]
    types: tuple[str, ...]  # with "types": the instance types whose nodes it replaces
    reasons: tuple[str, ...]
    pace: str | None  # how fast, when it replaces any

    def summary(self) -> str:
        if not self.refresh:
            what = "no instance refresh"
        elif self.replaces == "none":
            what = "an instance refresh starts and replaces no node"
        elif self.replaces == "all":
            what = "an instance refresh replaces every node"
        else:
            what = f"an instance refresh replaces the nodes of type {', '.join(self.types)} only"
        return "; ".join([what + (f" ({self.pace})" if self.pace and self.replaces != "none" else ""), *self.reasons])


@dataclass(frozen=True)
class Change:
    action: Action
    resource: PlanResource  # the head's (the base's for a deletion)
    properties: tuple[str, ...] = ()  # changed input paths
    replaced_by: tuple[str, ...] | None = ()  # None: the replacement table does not know the type
    nodes: NodeEffect | None = None
    refused: tuple[str, ...] = ()  # immutable fields the update would change: `pulumi up` fails there


def changed_paths(old: Any, new: Any, path: str = "") -> list[str]:
    """Dotted input paths whose values differ; lists compare whole (the providers diff them as a set or
    in order, and either way the whole list is sent). A masked secret is not compared (`masked_note`)."""
    if isinstance(old, dict) and isinstance(new, dict):
        found = []
        for key in sorted(set(old) | set(new)):
            found += changed_paths(old.get(key), new.get(key), f"{path}.{key}" if path else key)
        return found
    if old == new or (is_unknown(old) and is_unknown(new)) or MASK in (old, new):
        return []
    return [path]


def _launch_template_id(group: PlanResource) -> Any:
    spec = ((group.props.get(_POLICY) or {}).get("launchTemplate") or {}).get("launchTemplateSpecification") or {}
    return spec.get("launchTemplateId") or (group.props.get("launchTemplate") or {}).get("id")


def _instance_types(group: PlanResource) -> set[str]:
    overrides = ((group.props.get(_POLICY) or {}).get("launchTemplate") or {}).get("overrides") or []
    return {o["instanceType"] for o in overrides if isinstance(o, dict) and isinstance(o.get("instanceType"), str)}


def _pace(group: PlanResource) -> str | None:
    preferences = (group.props.get("instanceRefresh") or {}).get("preferences") or {}
    if not preferences:
        return None
    parts = [
        f"at least {preferences.get('minHealthyPercentage', 90):g}% healthy",
        f"at most {preferences.get('maxHealthyPercentage', 100):g}%",
    ]
    if preferences.get("checkpointPercentages"):
        parts.append(
            f"pausing {preferences.get('checkpointDelay', 3600)} s after "
            f"{', '.join(f'{p:g}%' for p in preferences['checkpointPercentages'])}"
        )
    if preferences.get("instanceWarmup") is not None:
        parts.append(f"{preferences['instanceWarmup']} s warm-up each")
    return ", ".join(parts)


def node_effect(
    base: PlanResource, head: PlanResource, template_changes: list[str] | None, group_changes: list[str]
) -> NodeEffect:
    """What an update of a group does to its running nodes. `template_changes`: the changed inputs of the
    launch template the head uses (None: a different template than the base's)."""
    new_version = template_changes is None or any(
        not any(c == u or c.startswith(u + ".") for u in _UNVERSIONED) for c in template_changes
    )
    removed = sorted(_instance_types(base) - _instance_types(head))
    policy_changed = new_version or any(
        c == _POLICY or c.startswith(_POLICY + ".") or c == "launchTemplate" or c.startswith("launchTemplate.")
        for c in group_changes
    )
    refresh_settings = head.props.get("instanceRefresh") or {}
    triggers = refresh_settings.get("triggers") or []
    refresh = bool(refresh_settings) and (
        policy_changed or any(c == t or c.startswith(t + ".") for c in group_changes for t in triggers)
    )
    reasons = []
    if new_version:
        reasons.append("new launch template version" if template_changes is not None else "another launch template")
    if removed:
        reasons.append(f"{', '.join(removed)} no longer listed")
    if any(c.startswith(_DISTRIBUTION) for c in group_changes):
        reasons.append(
            "new launches follow the new On-Demand/Spot mix; running nodes are protected from the "
            "group's own scale-in, which should keep their purchase option (to verify once on a live "
            "group: docs/day-two.md)"
            if head.props.get("protectFromScaleIn")
            else "the group itself gradually replaces running nodes to reach the new On-Demand/Spot mix"
        )
    if head.props.get("protectFromScaleIn") and not base.props.get("protectFromScaleIn"):
        reasons.append(
            "nodes running now stay unprotected from the group's scale-in until replaced (the setting "
            "applies to launches; docs/day-two.md protects them once)"
        )
    preferences = refresh_settings.get("preferences") or {}
    replaces: Literal["none", "all", "types"]
    types: tuple[str, ...]
    if not refresh:
        replaces, types = "none", ()
    elif new_version or not preferences.get("skipMatching"):
        replaces, types = "all", ()
    elif removed:
        replaces, types = "types", tuple(removed)
    else:
        replaces, types = "none", ()
    if refresh:
        reasons.append("a refresh still running is cancelled first (the provider starts one at a time)")
    # A protected node is replaced only when the refresh is told to (StartInstanceRefresh's
    # ScaleInProtectedInstances: Refresh; Ignore skips it; Wait, the default, waits an hour and fails).
    handling = preferences.get("scaleInProtectedInstances") or "Wait"
    if replaces != "none" and head.props.get("protectFromScaleIn") and handling != "Refresh":
        reasons.append(
            f"nothing is replaced: the nodes are protected and the refresh's scaleInProtectedInstances is {handling}"
        )
        replaces, types = "none", ()
    return NodeEffect(refresh, replaces, types, tuple(reasons), _pace(head))


def _template_of(group: PlanResource, templates: list[PlanResource]) -> PlanResource | None:
    """The launch template a group launches from: the one whose (known) id it names, else the one it
    depends on, else the only one under its parent component."""
    named = _launch_template_id(group)
    if isinstance(named, str) and not is_unknown(named):
        found = [t for t in templates if t.id == named]
        if len(found) == 1:
            return found[0]
    for candidates in (
        [t for t in templates if t.urn in group.dependencies],
        [t for t in templates if group.parent and t.parent == group.parent],
    ):
        if len(candidates) == 1:
            return candidates[0]
    return None


def plan_diff(base: list[PlanResource], head: list[PlanResource]) -> list[Change]:
    """Every resource that differs, in the head's order (deletions last)."""
    before = {r.urn: r for r in base}
    after = {r.urn: r for r in head}
    templates_before = [r for r in base if r.type == LAUNCH_TEMPLATE]
    templates_after = [r for r in head if r.type == LAUNCH_TEMPLATE]
    changes = []
    for resource in head:
        old = before.get(resource.urn)
        if old is None:
            changes.append(Change("create", resource))
            continue
        changed = changed_paths(old.props, resource.props)
        forced = replaced_by(resource.type, changed)
        nodes = None
        if resource.type == ASG:
            old_template, new_template = _template_of(old, templates_before), _template_of(resource, templates_after)
            # Another template: the group names another id, or launches from another resource.
            another = any(c.endswith("launchTemplateSpecification.launchTemplateId") for c in changed) or (
                old_template is not None and new_template is not None and old_template.urn != new_template.urn
            )
            if another:
                template_changes = None
            elif old_template is not None and new_template is not None:
                template_changes = changed_paths(old_template.props, new_template.props)
            else:
                template_changes = []  # not identified in the plans: only the group's own inputs are judged
            if forced:
                nodes = NodeEffect(False, "all", (), ("the group itself is replaced",), None)
            elif changed or template_changes != []:
                nodes = node_effect(old, resource, template_changes, changed)
                if not changed and "new launch template version" in nodes.reasons:
                    # The group's template version moves with the template (a number the offline plan fixes).
                    changed = [f"{_POLICY}.launchTemplate.launchTemplateSpecification.version"]
                elif not changed:
                    nodes = None
        if not changed and nodes is None:
            continue
        action: Action = "replace" if forced else "update"
        changes.append(
            Change(
                action,
                resource,
                tuple(changed),
                None if forced is None else tuple(forced),
                nodes,
                tuple(refused_changes(resource.type, changed)),
            )
        )
    gone = NodeEffect(False, "all", (), ("the group is deleted: every node of it is terminated",), None)
    changes += [Change("delete", r, nodes=gone if r.type == ASG else None) for r in base if r.urn not in after]
    return changes


def masked_note(base: list[PlanResource], head: list[PlanResource]) -> list[str]:
    """What the diff could not see: a plan file written without `--show-secrets` holds no secret value."""
    if not any(holds_masked(r.props) for r in (*base, *head)):
        return []
    return [
        "Secret values written as [secret] in a plan file were not compared; write the plans with "
        "`seedance plan --json FILE --show-secrets` to compare them."
    ]


def _label(resource: PlanResource) -> str:
    return f"{resource.type} {resource.name}"


def render_diff(changes: list[Change]) -> list[str]:
    """The changes for people, one resource a line with what it does to nodes under its group."""
    if not changes:
        return ["No changes to the running system."]
    counts = {action: sum(1 for c in changes if c.action == action) for action in SYMBOLS}
    lines = [
        f"Changes to the running system: {counts['create']} to create, {counts['update']} to update in place, "
        f"{counts['replace']} to replace, {counts['delete']} to delete"
    ]
    for change in changes:
        line = f"  {SYMBOLS[change.action]:<2} {change.action:<7} {_label(change.resource)}"
        if change.properties:
            shown = ", ".join(change.properties[:6]) + (
                f" (+{len(change.properties) - 6} more)" if len(change.properties) > 6 else ""
            )
            line += f": {shown}"
        if change.replaced_by:
            line += f" [replaced because of {', '.join(change.replaced_by)}]"
        elif change.action == "update" and change.replaced_by is None:
            line += " [in place unless the provider replaces on one of these: type not in seedance's table]"
        if change.refused:
            line += f" [FAILS: the API server refuses to change {', '.join(change.refused)}; rename the object]"
        lines.append(line)
        if change.nodes is not None:
            lines.append(f"       nodes: {change.nodes.summary()}")
    return lines


def replaced_nodes(changes: list[Change]) -> list[tuple[str, NodeEffect]]:
    """(group, effect) for every group whose running nodes the change replaces."""
    return [(c.resource.name, c.nodes) for c in changes if c.nodes is not None and c.nodes.replaces != "none"]
