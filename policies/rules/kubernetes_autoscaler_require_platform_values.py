"""The cluster autoscaler is the platform's. Its settings decide whether idle GPU nodes leave (the scale-down
thresholds, delays and unready time), whether nodes come for pods that could never run on them (ignored
taints), which groups it manages (its region, discovery), how many nodes it may start, whether gangs get
their nodes (ProvisioningRequests) and whether it runs at all; its image runs as the role that scales the
groups. A list of bad flags trails the next flag, so the model is positive:

- always: no Auto Scaling group carries the autoscaler's per-group options (tags
  `k8s.io/cluster-autoscaler/node-template/autoscaling-options/...`, which override its flags for that
  group's nodes): the platform sets none;
- with the stack config: a plan with Auto Scaling groups has the autoscaler's release (found by its chart's or
  its release's name),
  at the chart version the config gives, with exactly the values the platform builds
  (components/cluster/autoscaler.py `autoscaler_values`), its service account's role annotation and its
  pods' cost labels aside (the identity and cost rules judge those)."""

from typing import Any

from components.plan.resources import ASG, HELM_RELEASE, tags_of
from components.plan.unknowns import of_types
from policies.framework import Rule

CHART = "cluster-autoscaler"
OPTIONS_TAG = "k8s.io/cluster-autoscaler/node-template/autoscaling-options/"


def _releases(resources) -> list:
    return [
        r
        for r in of_types(resources, HELM_RELEASE)
        if str(r.props.get("chart")).rstrip("/").rsplit("/", 1)[-1] == CHART or r.props.get("name") == CHART
    ]


def _compared(values: Any) -> Any:
    """The values as compared: the role annotation and the cost labels out."""
    if not isinstance(values, dict):
        return values
    rbac = values.get("rbac")
    if isinstance(rbac, dict) and isinstance(rbac.get("serviceAccount"), dict):
        rbac = {**rbac, "serviceAccount": {k: v for k, v in rbac["serviceAccount"].items() if k != "annotations"}}
    return {**{k: v for k, v in values.items() if k != "podLabels"}, **({"rbac": rbac} if rbac is not None else {})}


def check(resources, config):
    groups = of_types(resources, ASG)
    for group in groups:
        options = sorted(k for k in (tags_of(group) or {}) if str(k).startswith(OPTIONS_TAG))
        if options:
            yield (
                group.urn,
                (
                    f"{group.name}: sets the autoscaler's options for its nodes ({', '.join(options)}): they override "
                    "the flags the platform gives it"
                ),
            )
    if not config["from_stack_config"]:
        return
    releases = _releases(resources)
    if groups and not releases:
        yield None, "the plan has no cluster autoscaler: nothing adds or removes its groups' nodes"
    for release in releases:
        if str(release.props.get("version")) != config["chart_version"]:
            yield (
                release.urn,
                (
                    f"{release.name}: the autoscaler's chart at {release.props.get('version')}; the stack config "
                    f"gives {config['chart_version']}"
                ),
            )
        if _compared(release.props.get("values")) != _compared(config["values"]):
            yield (
                release.urn,
                (
                    f"{release.name}: the autoscaler's values are not the platform's (its flags, image, replicas, "
                    "region, discovery or RBAC)"
                ),
            )


RULE = Rule(
    name="kubernetes-autoscaler-require-platform-values",
    description="No group sets the autoscaler's per-group options; with the stack config, the autoscaler's "
    "release is there, at the config's chart version, with exactly the platform's values.",
    severity="critical",
    remediation="Change the autoscaler through the stack config (cluster.autoscaler) and let the program build "
    "its values (components/cluster/autoscaler.py).",
    topics=("cost", "kubernetes"),
    config={
        "from_stack_config": {"type": "boolean", "default": False},
        "chart_version": {"type": "string", "default": ""},
        "values": {"type": "object", "default": {}},
    },
    check_stack=check,
    standards=("Cluster autoscaler FAQ: what are the parameters to CA",),
)
