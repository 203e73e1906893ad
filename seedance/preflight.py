"""`seedance preflight --stack <env>`: read-only questions to the target account, before any `pulumi up`,
about what the plan alone cannot know, each answer with the step to take. Exit 1 when any blocks.

A call the caller may not make is reported as "could not check X: missing permission Y", never a
traceback; it blocks nothing (the run would find out), but says what was not checked.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from botocore.exceptions import BotoCoreError, ClientError

from components.catalog.instance_types import gpu_instance_type
from components.cluster.versions import kubernetes_version
from components.pricing.commitments import last_full_day
from components.pricing.live import boto3_clients
from components.stack.config import StackConfig
from seedance.deadline import timeout_seconds, within
from seedance.stack_input import load_stack

Verdict = Literal["ok", "warning", "blocker", "unchecked"]
Clients = Callable[[str, str], Any]  # (service, region) -> boto3 client

# EC2 vCPU quotas by instance family (Service Quotas, service code ec2).
ON_DEMAND_QUOTAS = {
    "g": ("L-DB2E81BA", "Running On-Demand G and VT instances"),
    "p": ("L-417A185B", "Running On-Demand P instances"),
}
SPOT_QUOTAS = {
    "g": ("L-3819A6DF", "All G and VT Spot Instance Requests"),
    "p": ("L-7212CCBC", "All P Spot Instance Requests"),
}
DENIED = {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "UnrecognizedClientException"}


@dataclass(frozen=True)
class Finding:
    check: str
    verdict: Verdict
    detail: str


def _unchecked(findings: list[Finding], check: str, permission: str, error: Exception) -> None:
    code = error.response.get("Error", {}).get("Code", "") if isinstance(error, ClientError) else ""
    why = (
        f"missing permission {permission}"
        if code in DENIED
        else f"{permission} answered {code}"
        if code
        else str(error)
    )
    findings.append(Finding(check, "unchecked", f"could not check: {why}"))


# A question to AWS, asked with no arguments. `...`: a question asked in a loop binds the loop's values as
# its lambda's defaults, which mypy cannot infer against a callable of no parameters.
AwsCall = Callable[..., Any]


def _call(findings: list[Finding], check: str, permission: str, call: AwsCall) -> Any:
    """The call's answer, or None with a finding saying why it could not be asked."""
    try:
        return call()
    except (ClientError, BotoCoreError) as error:
        _unchecked(findings, check, permission, error)
    return None


def vcpus_needed(config: StackConfig) -> dict[tuple[str, str], tuple[int, int]]:
    """(market, family) -> (vCPUs at creation, at the groups' maxima): on-demand counts every GPU (spot can
    always fall back to it), spot the class's share at max."""
    needs: dict[tuple[str, str], list[int]] = {}
    for group in config.gpu_node_groups:
        shape = gpu_instance_type(group.instance_types[0])
        family = group.instance_types[0][0]
        per_instance = shape.vcpus
        desired, largest = group.desired_gpus // shape.gpus, group.max_gpus // shape.gpus
        on_demand = needs.setdefault(("on-demand", family), [0, 0])
        on_demand[0] += desired * per_instance
        on_demand[1] += largest * per_instance
        spot = needs.setdefault(("spot", family), [0, 0])
        spot[1] += math.ceil(largest * group.workload().max_spot_share) * per_instance
    return {key: (need[0], need[1]) for key, need in needs.items()}


def check_quotas(config: StackConfig, clients: Clients, findings: list[Finding], account: str | None) -> None:
    quotas = clients("service-quotas", config.region)
    for (market, family), (at_creation, at_max) in sorted(vcpus_needed(config).items()):
        table = ON_DEMAND_QUOTAS if market == "on-demand" else SPOT_QUOTAS
        if family not in table or at_max == 0:
            continue
        code, name = table[family]
        check = f"quota: {name}"
        answer = _call(
            findings,
            check,
            "servicequotas:GetServiceQuota",
            lambda code=code: quotas.get_service_quota(ServiceCode="ec2", QuotaCode=code),
        )
        if answer is None:
            continue
        value = answer["Quota"]["Value"]
        step = f"request {at_max:g} vCPUs in Service Quotas (ec2 {code}), days ahead: GPU quotas are reviewed by hand"
        if value < at_creation:
            findings.append(Finding(check, "blocker", f"{value:g} vCPUs, the first run needs {at_creation}: {step}"))
        elif value < at_max:
            findings.append(
                Finding(
                    check,
                    "warning",
                    f"{value:g} vCPUs: enough at creation ({at_creation}), not at "
                    f"the groups' maxima ({at_max}): {step}",
                )
            )
        else:
            findings.append(Finding(check, "ok", f"{value:g} vCPUs >= {at_max} at the maxima"))


def check_zones(config: StackConfig, clients: Clients, findings: list[Finding], account: str | None) -> None:
    ec2 = clients("ec2", config.region)
    answer = _call(
        findings,
        "zones",
        "ec2:DescribeAvailabilityZones",
        lambda: ec2.describe_availability_zones(
            Filters=[{"Name": "state", "Values": ["available"]}, {"Name": "zone-type", "Values": ["availability-zone"]}]
        ),
    )
    if answer is None:
        return
    ids = {z["ZoneName"]: z["ZoneId"] for z in answer["AvailabilityZones"]}
    try:
        zones = config.usable_zones(ids)
    except ValueError as error:
        findings.append(Finding("zones", "blocker", str(error)))
        return
    chosen = {ids[z]: z for z in zones}
    findings.append(Finding("zones", "ok", ", ".join(f"{name} ({zone_id})" for zone_id, name in chosen.items())))
    for group in config.gpu_node_groups:
        check = f"offerings: group {group.name}"
        offered = _call(
            findings,
            check,
            "ec2:DescribeInstanceTypeOfferings",
            lambda group=group: ec2.describe_instance_type_offerings(
                LocationType="availability-zone-id",
                Filters=[
                    {"Name": "instance-type", "Values": group.instance_types},
                    {"Name": "location", "Values": sorted(chosen)},
                ],
            ),
        )
        if offered is None:
            continue
        where = {(o["InstanceType"], o["Location"]) for o in offered["InstanceTypeOfferings"]}
        bare = [chosen[z] for z in sorted(chosen) if not any((t, z) in where for t in group.instance_types)]
        thin = sorted({t for t in group.instance_types for z in chosen if (t, z) not in where})
        if bare:
            findings.append(
                Finding(
                    check,
                    "blocker",
                    f"none of {', '.join(group.instance_types)} is offered in "
                    f"{', '.join(bare)}: add a type offered there to the group (the stack takes the first "
                    "network.az_count zones by ID)",
                )
            )
        elif thin:
            findings.append(
                Finding(
                    check,
                    "warning",
                    f"{', '.join(thin)} not offered in every chosen zone (the group launches the others there)",
                )
            )
        else:
            findings.append(Finding(check, "ok", "every type offered in every chosen zone"))


def check_version(config: StackConfig, clients: Clients, findings: list[Finding], account: str | None) -> None:
    minor = config.cluster.kubernetes_version
    eks = clients("eks", config.region)
    answer = _call(
        findings,
        f"Kubernetes {minor}",
        "eks:DescribeClusterVersions",
        lambda: eks.describe_cluster_versions(clusterVersions=[minor]),
    )
    if answer is None:
        return
    versions = answer.get("clusterVersions", [])
    status = versions[0].get("versionStatus") if versions else "UNSUPPORTED"
    table = kubernetes_version(minor)
    if status == "STANDARD_SUPPORT":
        findings.append(Finding(f"Kubernetes {minor}", "ok", "in standard support"))
    elif status == "EXTENDED_SUPPORT":
        findings.append(
            Finding(
                f"Kubernetes {minor}",
                "warning",
                "in extended support: the control plane bills at "
                "the extended-support rate; choose a newer version in cluster.kubernetes_version",
            )
        )
    else:
        findings.append(
            Finding(
                f"Kubernetes {minor}",
                "blocker",
                "EKS does not create clusters of this version; "
                f"choose another in cluster.kubernetes_version (the table: "
                f"{'ends ' + str(table.end_of_extended) if table else 'not listed'})",
            )
        )


def _exists(findings: list[Finding], check: str, permission: str, call: AwsCall) -> bool | None:
    """Whether the IAM entity the call reads exists; None (with a finding) when it could not be asked."""
    try:
        call()
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") == "NoSuchEntity":
            return False
        _unchecked(findings, check, permission, error)
        return None
    except BotoCoreError as error:
        _unchecked(findings, check, permission, error)
        return None
    return True


def check_admin_roles(config: StackConfig, clients: Clients, findings: list[Finding], account: str | None) -> None:
    iam = clients("iam", config.region)
    for key, arn in config.cluster.principals():
        owner = arn.split(":")[4]
        kind, _, path = arn.split(":", 5)[5].partition("/")
        name = path.rsplit("/", 1)[-1]
        check, permission = f"access entry {arn}", "iam:GetRole" if kind == "role" else "iam:GetUser"
        if owner != account:  # EKS takes principals of other accounts; these credentials cannot read them
            findings.append(
                Finding(
                    check,
                    "unchecked",
                    f"could not check: it belongs to account {owner}, not this "
                    f"one ({account or 'unknown'}); confirm it there",
                )
            )
            continue
        exists = _exists(
            findings,
            check,
            permission,
            lambda name=name, kind=kind: iam.get_role(RoleName=name) if kind == "role" else iam.get_user(UserName=name),
        )
        if exists:
            findings.append(Finding(check, "ok", "exists"))
        elif exists is False:
            findings.append(
                Finding(
                    check,
                    "blocker",
                    f"no such role or user: EKS refuses an access entry for it; create it, or fix cluster.{key}",
                )
            )


def _gateway(ec2: Any, gateway: str, findings: list[Finding]) -> dict | None:
    """The Transit Gateway as this account sees it, or None (with a finding) when it cannot be used."""
    try:
        answer = ec2.describe_transit_gateways(TransitGatewayIds=[gateway])
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        if not code.startswith("InvalidTransitGatewayID"):  # .NotFound, .Malformed: the account cannot see it
            _unchecked(findings, "deploy path", "ec2:DescribeTransitGateways", error)
            return None
        answer = {"TransitGateways": []}
    except BotoCoreError as error:
        _unchecked(findings, "deploy path", "ec2:DescribeTransitGateways", error)
        return None
    available = [g for g in answer.get("TransitGateways", []) if g.get("State") == "available"]
    if not available:
        states = [str(g.get("State")) for g in answer.get("TransitGateways", [])]
        findings.append(
            Finding(
                "deploy path",
                "blocker",
                f"{gateway} is not available in this account "
                f"({', '.join(states) or 'not found'}): accept its RAM share, or fix "
                "network.transit_gateway_id",
            )
        )
        return None
    return available[0]


def check_deploy_path(config: StackConfig, clients: Clients, findings: list[Finding], account: str | None) -> None:
    """The way between the deployer and the private API through the Transit Gateway: the stack creates the
    VPC's side (attachment, routes from every private route table); the gateway's side must already route
    each deployer network, and carry the VPC's range back, or the first run cannot reach its cluster."""
    gateway, outside = config.network.transit_gateway_id, config.network.outside_vpc(config.cluster.deployer_cidrs)
    if gateway is None or not outside:
        return
    ec2 = clients("ec2", config.region)
    found = _gateway(ec2, gateway, findings)
    if found is None:
        return
    options, owner = found.get("Options", {}), found.get("OwnerId", "")
    findings.append(Finding("deploy path", "ok", f"{gateway} is available to attach the VPC to"))
    if account and owner and owner != account and options.get("AutoAcceptSharedAttachments") != "enable":
        findings.append(
            Finding(
                "deploy path: attachment acceptance",
                "blocker",
                f"{gateway} belongs to account "
                f"{owner} and does not accept shared attachments by itself: the first run's attachment "
                "would wait unaccepted and the API stay unreachable; ask its owner to enable auto-accept "
                "or to accept the attachment during the run",
            )
        )
    if options.get("DefaultRouteTablePropagation") != "enable":
        findings.append(
            Finding(
                "deploy path: route to the VPC",
                "warning",
                f"{gateway} does not propagate new "
                f"attachments: its owner must route {config.network.vpc_cidr} to the VPC's attachment "
                "in the deployer network's route table during the first run",
            )
        )
    table = (
        options.get("AssociationDefaultRouteTableId")
        if options.get("DefaultRouteTableAssociation") == "enable"
        else None
    )
    if table is None:
        findings.append(
            Finding(
                "deploy path: route to the deployers",
                "warning",
                f"{gateway} associates new "
                "attachments with no route table: its owner must associate the VPC's attachment with "
                f"one that routes {', '.join(outside)}",
            )
        )
        return
    for cidr in outside:
        check = f"deploy path: route to {cidr}"
        routes = _call(
            findings,
            check,
            "ec2:SearchTransitGatewayRoutes",
            lambda cidr=cidr: ec2.search_transit_gateway_routes(
                TransitGatewayRouteTableId=table,
                Filters=[
                    {"Name": "route-search.longest-prefix-match", "Values": [cidr]},
                    {"Name": "state", "Values": ["active"]},
                ],
            ),
        )
        if routes is None:
            continue
        if routes.get("Routes"):
            findings.append(
                Finding(check, "ok", f"{table} routes it ({routes['Routes'][0].get('DestinationCidrBlock')})")
            )
        else:
            findings.append(
                Finding(
                    check,
                    "blocker",
                    f"{gateway}'s route table {table}, where the VPC's attachment "
                    "lands, has no active route to it: the API's replies to the deployer would be "
                    "dropped; its owner must propagate or add the deployer network's route",
                )
            )


# (role, the service that uses it, whether the stack creates it itself)
SERVICE_LINKED_ROLES = (
    ("AWSServiceRoleForAmazonEKS", "eks.amazonaws.com", False),
    ("AWSServiceRoleForAmazonEKSNodegroup", "eks-nodegroup.amazonaws.com", False),
    ("AWSServiceRoleForAutoScaling", "autoscaling.amazonaws.com", True),
    ("AWSServiceRoleForEC2Spot", "spot.amazonaws.com", False),
)
# Created by the first Transit Gateway VPC attachment of the account.
TRANSIT_GATEWAY_ROLE = (("AWSServiceRoleForVPCTransitGateway", "transitgateway.amazonaws.com", False),)


def check_service_linked_roles(
    config: StackConfig, clients: Clients, findings: list[Finding], account: str | None
) -> None:
    """A missing role is created on first use, by the service, as the deployer: who may not
    iam:CreateServiceLinkedRole fails there, mid-run. Auto Scaling's the stack creates itself."""
    iam = clients("iam", config.region)
    attaches = config.network.transit_gateway_id is not None and config.network.outside_vpc(
        config.cluster.deployer_cidrs
    )
    for role, service, created_by_stack in SERVICE_LINKED_ROLES + (TRANSIT_GATEWAY_ROLE if attaches else ()):
        check = f"service-linked role {role}"
        exists = _exists(findings, check, "iam:GetRole", lambda role=role: iam.get_role(RoleName=role))
        if exists:
            findings.append(Finding(check, "ok", "exists"))
        elif exists is False and created_by_stack:
            findings.append(Finding(check, "ok", "not yet: the stack creates it (iam:CreateServiceLinkedRole)"))
        elif exists is False:
            findings.append(
                Finding(
                    check,
                    "warning",
                    f"not yet: {service} creates it on first use, as the deployer, "
                    "who needs iam:CreateServiceLinkedRole for it (or create it now: "
                    f"aws iam create-service-linked-role --aws-service-name {service})",
                )
            )


def _records_writes(selectors: dict, bucket_arn: str) -> bool:
    """Whether a trail's event selectors log write data events on the bucket's objects (basic or advanced)."""
    for selector in selectors.get("EventSelectors") or []:
        if selector.get("ReadWriteType", "All") in ("All", "WriteOnly"):
            for resource in selector.get("DataResources") or []:
                # "arn:aws:s3" (every bucket), "arn:aws:s3:::bucket/" or a prefix of it: never another
                # bucket whose name only starts the same
                if resource.get("Type") == "AWS::S3::Object" and any(
                    f"{bucket_arn}/".startswith(value) for value in resource.get("Values") or []
                ):
                    return True
    for selector in selectors.get("AdvancedEventSelectors") or []:
        fields = {f["Field"]: f for f in selector.get("FieldSelectors") or []}
        if (
            fields.get("eventCategory", {}).get("Equals") == ["Data"]
            and fields.get("resources.type", {}).get("Equals") == ["AWS::S3::Object"]
            and fields.get("readOnly", {}).get("Equals") != ["true"]
        ):
            prefixes = fields.get("resources.ARN", {}).get("StartsWith")
            if prefixes is None or any(f"{bucket_arn}/".startswith(p) for p in prefixes):
                return True
    return False


def check_model_writes_recorded(
    config: StackConfig, clients: Clients, findings: list[Finding], account: str | None
) -> None:
    """A model file is code the servers run: its writes should be on record (S3 data events of a trail,
    an organisation's trail too). The bucket does not exist before the first run; the trail may."""
    if not config.serving or account is None:
        return
    bucket_arn = f"arn:aws:s3:::{config.model_bucket_name(account)}"
    check = "model bucket writes recorded"
    trails = _call(
        findings,
        check,
        "cloudtrail:DescribeTrails",
        lambda: clients("cloudtrail", config.region).describe_trails(includeShadowTrails=True),
    )
    if trails is None:
        return
    for trail in trails.get("trailList", []):
        selectors = _call(
            findings,
            check,
            "cloudtrail:GetEventSelectors",
            lambda trail=trail: clients("cloudtrail", trail.get("HomeRegion", config.region)).get_event_selectors(
                TrailName=trail["TrailARN"]
            ),
        )
        if selectors is None or not _records_writes(selectors, bucket_arn):
            continue
        status = _call(
            findings,
            check,
            "cloudtrail:GetTrailStatus",
            lambda trail=trail: clients("cloudtrail", trail.get("HomeRegion", config.region)).get_trail_status(
                Name=trail["TrailARN"]
            ),
        )
        if status is not None and status.get("IsLogging"):
            findings.append(Finding(check, "ok", f"trail {trail.get('Name')} logs S3 write data events there"))
            return
    findings.append(
        Finding(
            check,
            "warning",
            f"no trail logs S3 write data events for {bucket_arn}: a model "
            "planted there would leave no record; add a data-event selector (write, AWS::S3::Object, "
            "that bucket) to a trail, or have the organisation's trail include it",
        )
    )


def check_unclaimed_volumes(
    config: StackConfig, clients: Clients, findings: list[Finding], account: str | None
) -> None:
    """Checkpoint volumes outlive their claims (Retain): the stack's volumes no instance holds are paid for
    by nobody's choice. An account with none yet (a first run) has nothing to list."""
    tag = config.budget.filter_tag
    check = "volumes no claim holds"
    answer = _call(
        findings,
        check,
        "ec2:DescribeVolumes",
        lambda: clients("ec2", config.region).describe_volumes(
            Filters=[
                {"Name": "status", "Values": ["available"]},
                {"Name": f"tag:{tag}", "Values": [config.resource_tags[tag]]},
            ]
        ),
    )
    if answer is None:
        return
    volumes = answer.get("Volumes", [])
    if not volumes:
        findings.append(Finding(check, "ok", "none"))
        return
    listed = ", ".join(
        f"{v['VolumeId']} ({v.get('VolumeType')} {v.get('Size')} GiB, claim "
        f"{_tag(v, 'kubernetes-namespace')}/{_tag(v, 'kubernetes-claim')})"
        for v in volumes[:10]
    )
    findings.append(
        Finding(
            check,
            "warning",
            f"{len(volumes)} detached volume(s) of this stack, "
            f"{sum(v.get('Size', 0) for v in volumes)} GiB billed every month: {listed}; snapshot "
            "what matters and delete them (`aws ec2 delete-volume`)",
        )
    )


def _tag(volume: dict, key: str) -> str:
    return next((t["Value"] for t in volume.get("Tags", []) if t.get("Key") == key), "?")


def check_cost_tag(config: StackConfig, clients: Clients, findings: list[Finding], account: str | None) -> None:
    ce = clients("ce", "us-east-1")  # Cost Explorer answers in us-east-1 only
    tag = config.budget.filter_tag
    answer = _call(
        findings,
        f"cost-allocation tag {tag}",
        "ce:ListCostAllocationTags",
        lambda: ce.list_cost_allocation_tags(TagKeys=[tag]),
    )
    if answer is None:
        return
    active = any(t.get("Status") == "Active" for t in answer.get("CostAllocationTags", []))
    findings.append(
        Finding(
            f"cost-allocation tag {tag}",
            "ok" if active else "warning",
            "active"
            if active
            else "not active: the budget counts nothing until it is; a day after "
            "the first `pulumi up`, `seedance budget-tag --stack <env> --activate`",
        )
    )


def check_commitments(config: StackConfig, clients: Clients, findings: list[Finding], account: str | None) -> None:
    """With `capacity.commitments: live` the decision reads Savings Plans, their rates, their utilisation and
    the capacity reservations: each read it will make, asked once, so a missing grant shows before a
    decision falls back to the lock's record of them."""
    if config.capacity.commitments != "live":
        return
    savings_plans, ce = clients("savingsplans", "us-east-1"), clients("ce", "us-east-1")
    ec2 = clients("ec2", config.region)
    plans = _call(
        findings,
        "Savings Plans",
        "savingsplans:DescribeSavingsPlans",
        lambda: savings_plans.describe_savings_plans(states=["active"], maxResults=5),
    )
    if plans is not None:
        for plan in plans.get("savingsPlans", [])[:1]:
            if (
                _call(
                    findings,
                    "Savings Plan rates",
                    "savingsplans:DescribeSavingsPlanRates",
                    lambda plan=plan: savings_plans.describe_savings_plan_rates(
                        savingsPlanId=plan["savingsPlanId"], maxResults=1
                    ),
                )
                is None
            ):
                break
        else:
            findings.append(Finding("Savings Plans", "ok", f"{len(plans.get('savingsPlans', []))} active read"))
    if (
        _call(
            findings,
            "Savings Plans utilisation",
            "ce:GetSavingsPlansUtilizationDetails",
            lambda: ce.get_savings_plans_utilization_details(TimePeriod=last_full_day(datetime.now(UTC)), MaxResults=1),
        )
        is not None
    ):
        findings.append(Finding("Savings Plans utilisation", "ok", "readable"))
    if (
        _call(
            findings,
            "capacity reservations",
            "ec2:DescribeCapacityReservations",
            lambda: ec2.describe_capacity_reservations(MaxResults=5),
        )
        is not None
    ):
        findings.append(Finding("capacity reservations", "ok", "readable"))


CHECKS = (
    check_quotas,
    check_zones,
    check_version,
    check_admin_roles,
    check_service_linked_roles,
    check_deploy_path,
    check_model_writes_recorded,
    check_unclaimed_volumes,
    check_cost_tag,
    check_commitments,
)


class NoIdentity(Exception):
    """The caller's identity could not be read: no check can be trusted to have asked anything."""


def preflight(config: StackConfig, clients: Clients) -> list[Finding]:
    findings: list[Finding] = []
    # Whose account this is (needs no permission: it fails only without credentials, a reachable endpoint or
    # a CA bundle, and then every other call would too, so nothing was checked and nothing may pass).
    caller = _call(
        findings,
        "caller identity",
        "sts:GetCallerIdentity",
        lambda: clients("sts", config.region).get_caller_identity(),
    )
    if caller is None:
        raise NoIdentity(findings[-1].detail.removeprefix("could not check: "))
    for check in CHECKS:
        check(config, clients, findings, caller["Account"])
    return findings


# Tests replace this to answer with recorded responses.
account_clients: Clients = boto3_clients


def preflight_command(args: argparse.Namespace) -> int:
    _project, config = load_stack(args.program, args.stack, args.stack_file)
    try:
        findings = within(args.timeout, lambda: preflight(config, account_clients))
    except NoIdentity as error:
        print(
            f"seedance: error: preflight could not read the caller's identity ({error}): nothing was checked; "
            "check the credentials, the network path to STS and the CA bundle",
            file=sys.stderr,
        )
        return 2
    except TimeoutError as error:
        print(
            f"seedance: error: preflight: {error} (--timeout); the account's endpoints did not answer", file=sys.stderr
        )
        return 2
    marks = {"ok": "ok     ", "warning": "warning", "blocker": "BLOCKER", "unchecked": "skipped"}
    for finding in findings:
        print(f"{marks[finding.verdict]}  {finding.check}: {finding.detail}")
    blockers = [f for f in findings if f.verdict == "blocker"]
    unchecked = sum(f.verdict == "unchecked" for f in findings)
    print(
        f"\n{len(blockers)} blocker(s), {sum(f.verdict == 'warning' for f in findings)} warning(s), "
        f"{unchecked} not checked"
    )
    return 1 if blockers or (args.strict and unchecked) else 0


def register(commands: argparse._SubParsersAction, stack_arguments: Callable[[argparse.ArgumentParser], None]) -> None:
    command = commands.add_parser("preflight", help="read-only questions to the target account before a first up")
    stack_arguments(command)
    command.add_argument(
        "--timeout",
        type=timeout_seconds,
        default=120.0,
        metavar="SECONDS",
        help="one deadline for every call (default 120); past it: exit 2",
    )
    command.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 also when a check could not be made (a CI gate that must see every answer)",
    )
    command.set_defaults(run=preflight_command)
