"""Small readers shared by the rules."""

from __future__ import annotations

from typing import Any

from components.capacity.mix import asg_mix
from components.capacity.workload_classes import workload_classes
from components.common.manifests import quantity as kubernetes_quantity
from components.compute.labels import BREAKER_TAG, CLASS_TAG, NODE_GROUP_TAG
from components.plan.resources import (
    ASG,
    EKS_ACCESS_ENTRY,
    IAM_ROLE,
    LAUNCH_TEMPLATE,
    S3_BUCKETS,
    S3_ENCRYPTION_CONFIGURATIONS,
    PlanResource,
    is_unknown,
    tags_of,
)
from components.plan.unknowns import of_types
from policies.readers.iam import account_of
from policies.readers.identity import AUTO_NAME


def class_table(attribute: str) -> dict[str, float]:
    """One workload-class parameter for every class (the rules' config defaults)."""
    return {name: getattr(klass, attribute) for name, klass in workload_classes().items()}


def number(value: Any, default: float = 0.0) -> float | None:
    """A numeric input, None when unknown at preview."""
    if value is None:
        return default
    if is_unknown(value):
        return None
    return float(value)


def workload_class(resource: PlanResource) -> str | None:
    """The seedance workload class of a GPU Auto Scaling group, from its node-template label tag."""
    if resource.type != ASG:
        return None
    return (tags_of(resource) or {}).get(CLASS_TAG)


def breaker_on(resource: PlanResource) -> bool:
    return (tags_of(resource) or {}).get(BREAKER_TAG) == "on"


def capped_class(resource: PlanResource, config: dict, table: str) -> str | None:
    """The workload class a GPU group is held to, if the rule's `table` has it: the stack config's class of the
    group its node-group tag names (a tag is plan data: relabelling an online group batch must not loosen its
    cap), else its class tag. None while the budget breaker, which sets the class caps aside on purpose
    outside prod, is on (prod's config sets `breaker_sets_caps_aside` false: there the breaker never moves a
    group, so its tag excuses nothing)."""
    group = (tags_of(resource) or {}).get(NODE_GROUP_TAG) if resource.type == ASG else None
    klass = config["group_classes"].get(group) or workload_class(resource)
    if klass not in config[table]:
        return None
    return None if breaker_on(resource) and config["breaker_sets_caps_aside"] else klass


# The settings of the rules that hold GPU groups to their class (the breaker's tag; the config's classes).
CLASS_SETTINGS: dict[str, dict[str, Any]] = {
    "breaker_sets_caps_aside": {"type": "boolean", "default": True},
    "group_classes": {"type": "object", "default": {}},
}  # node group -> class, from the stack config


def spot_share_at(resource: PlanResource, size: float) -> float | None:
    mix = asg_mix(resource)
    if mix is None or size <= 0:
        return None
    return mix.spot_share_at(size)


def customer_key(key: Any) -> bool:
    """Whether a KMS key reference names a key at all, and not by an AWS-managed alias (`alias/aws/ebs`, bare or
    in an ARN: AWS's key, not the stack's)."""
    return bool(key) and not (isinstance(key, str) and (key.startswith("alias/aws/") or ":alias/aws/" in key))


def block_devices(resource: PlanResource) -> list[tuple[str, dict]]:
    """The EBS devices a launch template (its mappings but instance-store ones) or an instance (its root and
    EBS devices) names: (device name, its EBS settings)."""
    props = resource.props
    if resource.type == LAUNCH_TEMPLATE:
        return [
            (str(m.get("deviceName")), m.get("ebs") or {})
            for m in props.get("blockDeviceMappings") or []
            if isinstance(m, dict) and "virtualName" not in m
        ]
    devices = [("root", props.get("rootBlockDevice") or {})]
    return devices + [(str(d.get("deviceName")), d) for d in props.get("ebsBlockDevices") or [] if isinstance(d, dict)]


def bucket_encryption_rules(resource: PlanResource) -> list | None:
    """The encryption rules a resource sets for its bucket (None: it sets none)."""
    if resource.type in S3_ENCRYPTION_CONFIGURATIONS:
        return resource.props.get("rules") or []
    inline = (resource.props.get("serverSideEncryptionConfiguration") or {}) if resource.type in S3_BUCKETS else {}
    return [inline["rule"]] if inline.get("rule") else None


def encryption_defaults(rules: list | None) -> list[dict]:
    """The default encryption (algorithm, key) each of a bucket's encryption rules applies."""
    return [(r.get("applyServerSideEncryptionByDefault") or {}) for r in rules or [] if isinstance(r, dict)]


def secrets_encryption(resource: PlanResource) -> tuple[list, Any]:
    """An EKS cluster's envelope encryption: the resources it covers and its KMS key."""
    encryption = resource.props.get("encryptionConfig") or {}
    return encryption.get("resources") or [], (encryption.get("provider") or {}).get("keyArn")


def home_accounts(resources, configured) -> frozenset[str]:
    """The stack's accounts: those the config names, else the account the cluster's nodes run in (the account of
    the node roles' access entries; none when the plan has no such entry). Only an entry for a role the plan
    itself creates counts: an entry naming another account's role would otherwise make that account home."""
    if configured:
        return frozenset(configured)
    created = _created_role_names(resources)
    nodes = [
        str(r.props.get("principalArn"))
        for r in of_types(resources, EKS_ACCESS_ENTRY)
        if r.props.get("type") == "EC2_LINUX"
    ]
    return frozenset(account for arn in nodes if created(arn) and (account := account_of(arn)) is not None)


def _created_role_names(resources):
    """Whether a role ARN names a role of the plan: by the name it is given, or by Pulumi's auto-name (its
    logical name, a dash and seven random hex digits)."""
    given, auto = set(), set()
    for role in of_types(resources, IAM_ROLE):
        name = role.props.get("name")
        if isinstance(name, str):
            given.add(name)
        else:
            auto.add(role.name)

    def created(arn: str) -> bool:
        name = arn.rsplit("/", 1)[-1]
        generated = AUTO_NAME.fullmatch(name)
        return name in given or (generated is not None and generated.group(1) in auto)

    return created


def bucket_name(resource: PlanResource) -> str:
    """The bucket a bucket, or a resource of one (policy, block, encryption), names."""
    return str(resource.props.get("bucket") or resource.name)


def quantity(value: Any) -> float | None:
    """A Kubernetes CPU or memory quantity in cores or GiB; None when absent, unknown or unreadable."""
    return None if is_unknown(value) else kubernetes_quantity(value)


def memory_gib(value: Any) -> float | None:
    """Memory quantity in GiB (a bare number is bytes)."""
    if value is not None and str(value).replace(".", "", 1).isdigit():  # an unknown's sentinel is no number
        return float(value) / 2**30
    return quantity(value)
