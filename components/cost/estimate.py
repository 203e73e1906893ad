"""Monthly cost of what a plan creates, from the bundled price catalog. Pure. 730 hours a month.

Used by `seedance plan` and `seedance check`, by the budget policy and by the replay benchmark's
on-demand baseline. A resource whose cost depends on something the plan does not hold (an S3
bucket's contents, log volume) is listed at $0 with the reason; an input unknown at preview makes
that resource's cost unknown, never a guess.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import cache
from typing import Any

from components.capacity.mix import asg_mix, expected_spot_rate, hourly, price_mix
from components.cluster.versions import kubernetes_version
from components.compute.labels import CAPACITY_BLOCK_TAG
from components.plan.resources import (
    ASG,
    ASG_SCHEDULE,
    CAPACITY_RESERVATION,
    EBS_VOLUME,
    EC2_INSTANCE,
    EKS_CLUSTER,
    EKS_NODE_GROUP,
    ELASTIC_IP,
    EXPECTED_GB_TAG,
    K8S_CLAIM,
    K8S_SERVICE,
    K8S_STORAGE_CLASS,
    KMS_KEY,
    LAUNCH_TEMPLATE,
    LOAD_BALANCER,
    LOG_GROUP,
    NAT_GATEWAY,
    TRANSIT_GATEWAY_ATTACHMENT,
    VPC_ENDPOINT,
    PlanResource,
    is_unknown,
    tags_of,
)
from components.plan.unknowns import ReadPlan, UnknownValueError, of_types, read_plan
from components.pricing.ebs import EBS_VOLUME_TYPES, ebs_monthly
from components.pricing.prices import HOURS_PER_MONTH, Price, SnapshotPriceSource, UnitPrice
from components.storage.ebs_csi import class_parameters, given, volume_types
from seedance_client.team_rules import quantity_gib


class UnknownValue(Exception):
    """An input the cost depends on is not known yet (a preview's computed value)."""


@dataclass(frozen=True)
class PriceCatalog:
    on_demand: dict[str, Price]  # instance type -> $/h
    services: dict[str, UnitPrice]

    def instance_hour(self, instance_type: str) -> float:
        price = self.on_demand.get(instance_type)
        if price is None:
            raise UnknownValue(f"no on-demand price for {instance_type}")
        return price.usd_per_hour

    def unit(self, name: str) -> float:
        return self.services[name].usd


@dataclass(frozen=True)
class CostLine:
    urn: str
    type: str
    monthly_usd: float | None  # None: unknown. A GPU group's worst case: its spot units at on-demand
    basis: str
    expected_usd: float | None = None  # a GPU group with spot: its spot units at the plan's expected price
    # An unknown cost waiting on a value known only at apply: that value's error (a reader may raise it again).
    waits_on: UnknownValueError | None = field(default=None, compare=False, repr=False)


@dataclass
class CostEstimate:
    lines: list[CostLine] = field(default_factory=list)

    @property
    def monthly_usd(self) -> float:
        return round(sum(line.monthly_usd or 0.0 for line in self.lines), 2)

    @property
    def expected_monthly_usd(self) -> float:
        """The total with each GPU group's spot at its plan's expected price (where the plan says one)."""
        return round(
            sum((line.monthly_usd if line.expected_usd is None else line.expected_usd) or 0.0 for line in self.lines), 2
        )

    def total(self, basis: str) -> float:
        """The total a budget is judged by: `worst_case` (spot at on-demand) or `expected`."""
        return self.expected_monthly_usd if basis == "expected" else self.monthly_usd

    @property
    def unknown(self) -> list[CostLine]:
        return [line for line in self.lines if line.monthly_usd is None]

    def to_json(self) -> dict[str, Any]:
        return {
            "monthly_usd": self.monthly_usd,
            "expected_monthly_usd": self.expected_monthly_usd,
            "resources": [
                {
                    "urn": line.urn,
                    "type": line.type,
                    "monthly_usd": line.monthly_usd,
                    **({"expected_usd": line.expected_usd} if line.expected_usd is not None else {}),
                    "basis": line.basis,
                }
                for line in self.lines
            ],
        }


def _known(value: Any, what: str) -> Any:
    if value is None or is_unknown(value):
        raise UnknownValue(f"{what} is unknown until the resource exists")
    return value


def _volume(resource: PlanResource, catalog: PriceCatalog) -> tuple[float, str]:
    props = resource.props
    volume_type = props.get("type") or "gp2"  # EC2's default when none is given
    if volume_type not in EBS_VOLUME_TYPES:
        raise UnknownValue(f"no price for EBS volume type {volume_type}")
    size = _known(props.get("size"), "the volume size")
    cost = ebs_monthly(volume_type, float(size), props.get("iops"), props.get("throughput"), catalog.services)
    return cost, f"{volume_type} {size:g} GiB" + (f", {props['iops']:g} IOPS" if props.get("iops") else "")


def _gpu_group(
    resource: PlanResource,
    catalog: PriceCatalog,
    templates: dict[str, PlanResource],
    scheduled: Mapping[str, float | Exception],
) -> tuple[float, str, float | None]:
    """(worst case $/month, basis, expected $/month or None): the group's mix priced by `price_mix`, its
    spot units at on-demand (spot prices are not bundled and move hourly; one zone may pay more than the
    plan expected) and, where the plan says its expected spot price, at that price too."""
    props = resource.props
    policy = props.get("mixedInstancesPolicy") or {}
    overrides = (policy.get("launchTemplate") or {}).get("overrides") or []
    mix = asg_mix(resource)
    if not overrides or mix is None:
        raise UnknownValue("an Auto Scaling group without a MixedInstancesPolicy is not priced")
    if props.get("warmPool"):
        # Its instances bill beside the group's (Running: as instances; Stopped: their volumes), and AWS refuses
        # a warm pool beside a mixed instances policy (PutWarmPool): never priced as if it were not there.
        raise UnknownValue(
            "it has a warm pool, which AWS refuses beside a mixed instances policy and which is not priced"
        )
    units = _desired(props)
    group = props.get("name") or resource.id
    every, own = scheduled.get(EVERY_GROUP), scheduled.get(group, 0.0) if group is not None else 0.0
    if isinstance(every, Exception):
        raise every
    if isinstance(own, Exception):
        raise own
    units = max(units, own)  # the largest size its scheduled actions set
    first = overrides[0]
    if not first.get("instanceType"):
        raise UnknownValue(
            "its overrides choose instance types by attributes (instanceRequirements), so any type "
            "may run: name the types"
        )
    weight = float(first.get("weightedCapacity") or 1)
    rate = catalog.instance_hour(first["instanceType"]) / weight
    offers = [(h.instance_type, h.count, h.usd_per_hour) for h in mix.holdings]  # RIs, at their effective rates
    worst = price_mix(mix, units, (first["instanceType"], rate), [(first["instanceType"], "", rate)], offers)
    assert worst is not None  # it has every rate it needs
    spot_rate = expected_spot_rate(resource)
    expected = None
    if spot_rate is not None and mix.spot_units(units) > 0:
        expected_rate = min(spot_rate / weight, rate)
        expected = price_mix(
            mix, units, (first["instanceType"], rate), [(first["instanceType"], "", expected_rate)], offers
        )
    instances = units / weight
    template = _launch_template(
        resource,
        lambda: ((policy.get("launchTemplate") or {}).get("launchTemplateSpecification") or {}).get("launchTemplateId"),
        templates,
    )
    disk = _root_volume(template, catalog) * instances if template is not None else 0.0
    reserved = [(u, r) for (market, _t, _z), u, r in worst if market == "reserved"]
    covered, reserved_cost = sum(u for u, _r in reserved), sum(u * r for u, r in reserved)
    basis = (
        f"{units:g} units: "
        + (f"{covered:g} reserved for ${reserved_cost:.4f}/h, " if covered else "")
        + f"{mix.on_demand_units(units) - covered:g} on-demand at ${rate:.4f}/unit-h"
        f" ({first['instanceType']}), {mix.spot_units(units):g} spot priced as on-demand (worst case)"
        + (
            f"; expected ${hourly(expected) * HOURS_PER_MONTH + disk:,.2f} with spot at the plan's "
            f"${expected_rate:.4f}/unit-h"
            if expected
            else ""
        )
        + (f", root volumes ${disk:,.2f}" if disk else "")
    )
    return (
        hourly(worst) * HOURS_PER_MONTH + disk,
        basis,
        None if expected is None else round(hourly(expected) * HOURS_PER_MONTH + disk, 2),
    )


EVERY_GROUP = "*"  # a scheduled action whose group is known only at apply: it may be any group


def _scheduled_sizes(resources: ReadPlan) -> dict[str, float | Exception]:
    """Each group's largest size its scheduled actions set (desired or minimum), by the group's name; what
    stops the reading when one of them is known only at apply or unreadable (under EVERY_GROUP when its group
    is unknown)."""
    sizes: dict[str, float | Exception] = {}
    for action in of_types(resources, ASG_SCHEDULE):
        try:
            group = str(action.props.get("autoscalingGroupName"))
        except UnknownValueError as unknown:
            sizes[EVERY_GROUP] = unknown
            continue
        try:
            set_to = [
                float(v) for v in (action.props.get("desiredCapacity"), action.props.get("minSize")) if v is not None
            ]
        except UnknownValueError as unknown:
            sizes[group] = unknown
            continue
        except (TypeError, ValueError) as error:
            sizes[group] = UnknownValue(f"scheduled action {action.name} sets an unreadable size ({error})")
            continue
        known = sizes.get(group, 0.0)
        if set_to and not isinstance(known, Exception):
            sizes[group] = max(known, *set_to)
    return sizes


def _desired(props: Mapping[str, Any]) -> float:
    """A group's desired capacity; Auto Scaling's own when none is given: the group's minimum size
    (CreateAutoScalingGroup, DesiredCapacity)."""
    desired = props.get("desiredCapacity")
    return float(_known(props.get("minSize") if desired is None else desired, "the desired capacity"))


def _launch_template(
    group: PlanResource, named: Callable[[], Any], templates: dict[str, PlanResource]
) -> PlanResource | None:
    """The group's launch template: the one it depends on (how the engine links them; its id is a
    plan-only value or unknown at preview), else the one whose id `named()` reads (a plan file without
    links; read only then, as it is unknown at preview)."""
    linked = [templates[urn] for urn in group.dependencies if urn in templates]
    if len(linked) == 1:
        return linked[0]
    template_id = named()
    return next((t for t in templates.values() if t.id and t.id == template_id), None)


def _own_template(launcher: PlanResource, templates: dict[str, PlanResource]) -> PlanResource | None:
    """The launch template a group, node group or instance names as its own (`launchTemplate.id`)."""
    return _launch_template(launcher, lambda: (launcher.props.get("launchTemplate") or {}).get("id"), templates)


def _capacity_block_group(
    resource: PlanResource, catalog: PriceCatalog, templates: dict[str, PlanResource]
) -> tuple[float, str]:
    """A purchased Capacity Block's group: its instance hours were paid at purchase, so only their root
    volumes bill, at the size the group declares (the block's count inside its window, 0 outside)."""
    instances = _desired(resource.props)
    template = _own_template(resource, templates)
    disk = _root_volume(template, catalog) * instances if template is not None else 0.0
    reservation = (tags_of(resource) or {})[CAPACITY_BLOCK_TAG]
    return disk, (
        f"Capacity Block {reservation}: instances paid at purchase; {instances:g} running, root volumes ${disk:,.2f}"
    )


def _root_volume(template: PlanResource, catalog: PriceCatalog) -> float:
    total = 0.0
    for mapping in template.props.get("blockDeviceMappings") or []:
        ebs = mapping.get("ebs") or {}
        if ebs.get("volumeSize"):
            total += ebs_monthly(
                ebs.get("volumeType") or "gp3",
                float(ebs["volumeSize"]),
                ebs.get("iops"),
                ebs.get("throughput"),
                catalog.services,
            )
    return total


def _node_group(resource: PlanResource, catalog: PriceCatalog, templates: dict[str, PlanResource]) -> tuple[float, str]:
    """A managed node group's instances on demand, and the volumes its launch template gives each."""
    scaling = resource.props.get("scalingConfig") or {}
    desired = float(_known(scaling.get("desiredSize"), "the desired size"))
    template = _own_template(resource, templates)
    instance_type = _instance_type(resource.props.get("instanceTypes") or [None], template, EKS_DEFAULT_INSTANCE_TYPE)
    hourly = catalog.instance_hour(instance_type)
    disk = _root_volume(template, catalog) * desired if template is not None else 0.0
    return (
        desired * hourly * HOURS_PER_MONTH + disk,
        f"{desired:g} x {instance_type} on-demand at ${hourly:.4f}/h"
        + (f", root volumes ${disk:,.2f}" if disk else ""),
    )


# EKS's type for a node group whose launch template and instanceTypes name none (CreateNodegroup).
EKS_DEFAULT_INSTANCE_TYPE = "t3.medium"


def _instance_type(named: list[Any], template: PlanResource | None, default: str | None = None) -> str:
    """The type a launcher runs: the first it names, else its launch template's (EC2 and EKS take the
    template's when the launcher names none), else the service's default."""
    if named[0] is None and template is not None:
        named = [template.props.get("instanceType")]
    instance_type: str = _known(default if named[0] is None else named[0], "the instance type")
    return instance_type


def _instance(resource: PlanResource, catalog: PriceCatalog, templates: dict[str, PlanResource]) -> tuple[float, str]:
    template = _own_template(resource, templates)
    instance_type = _instance_type([resource.props.get("instanceType")], template)
    hourly = catalog.instance_hour(instance_type)
    return hourly * HOURS_PER_MONTH, f"{instance_type} on-demand at ${hourly:.4f}/h"


def _capacity_reservation(resource: PlanResource, catalog: PriceCatalog) -> tuple[float, str]:
    """An On-Demand Capacity Reservation bills its instances at the on-demand rate whether or not they run
    (a group launching into it is priced again: the worst case)."""
    count = float(_known(resource.props.get("instanceCount"), "the instance count"))
    instance_type = _known(resource.props.get("instanceType"), "the instance type")
    hourly = catalog.instance_hour(instance_type)
    return (
        count * hourly * HOURS_PER_MONTH,
        f"capacity reservation of {count:g} x {instance_type} at ${hourly:.4f}/h, billed used or not",
    )


def _endpoint(resource: PlanResource, catalog: PriceCatalog) -> tuple[float, str]:
    if resource.props.get("vpcEndpointType", "Gateway") != "Interface":
        return 0.0, "gateway endpoint: free"
    zones = len(_known(resource.props.get("subnetIds"), "the endpoint's subnets"))
    return (
        zones * HOURS_PER_MONTH * catalog.unit("interface_endpoint_az_hour"),
        f"interface endpoint in {zones} zones (data processed: see the egress report)",
    )


def _service(resource: PlanResource, catalog: PriceCatalog) -> tuple[float, str]:
    if (resource.props.get("spec") or {}).get("type") != "LoadBalancer":
        return 0.0, "in-cluster service: free"
    return HOURS_PER_MONTH * catalog.unit("load_balancer_hour"), "load balancer hours (LCUs not included)"


def _expected_gb(resource: PlanResource) -> float:
    value = (tags_of(resource) or {}).get(EXPECTED_GB_TAG)
    try:
        return max(0.0, float(value)) if value is not None else 0.0
    except ValueError:
        raise UnknownValue(f"tag {EXPECTED_GB_TAG} = {value!r} is not a number") from None


def _nat_gateway(resource: PlanResource, catalog: PriceCatalog) -> tuple[float, str]:
    gb = _expected_gb(resource)
    hours = catalog.unit("nat_gateway_hour") * HOURS_PER_MONTH
    return hours + gb * catalog.unit("nat_gateway_gb"), (
        f"NAT gateway hours ${hours:,.2f} + {gb:,.0f} GB processed (the egress model's, tagged on the gateway)"
    )


def _log_group(resource: PlanResource, catalog: PriceCatalog) -> tuple[float, str]:
    gb = _expected_gb(resource)
    return gb * catalog.unit("cloudwatch_logs_ingestion_gb"), (
        f"{gb:,.0f} GB/month ingested (the stack's stated assumption; storage not included)"
    )


# Priced by the month or the hour at one unit price, whatever the resource's inputs: (price, basis).
FIXED: dict[str, tuple[str, str]] = {
    ELASTIC_IP: ("public_ipv4_hour", "public IPv4 address (a NAT gateway's), billed in use or idle"),
    LOAD_BALANCER: ("load_balancer_hour", "load balancer hours (LCUs not included)"),
    KMS_KEY: ("kms_key_month", "customer managed key (requests not included)"),
    # Billed to the VPC's owner per attachment-hour; the deployer's traffic through it is small.
    TRANSIT_GATEWAY_ATTACHMENT: (
        "transit_gateway_attachment_hour",
        "Transit Gateway attachment hours (data processed not included)",
    ),
}


def _fixed(resource: PlanResource, catalog: PriceCatalog) -> tuple[float, str]:
    service, basis = FIXED[resource.type]
    value = catalog.unit(service)
    return (value if service.endswith("_month") else value * HOURS_PER_MONTH), basis


PRICERS: dict[str, Callable[..., tuple[float, str]]] = {
    EBS_VOLUME: _volume,
    CAPACITY_RESERVATION: _capacity_reservation,
    VPC_ENDPOINT: _endpoint,
    K8S_SERVICE: _service,
    NAT_GATEWAY: _nat_gateway,
    LOG_GROUP: _log_group,
    **{resource_type: _fixed for resource_type in FIXED},
}


def _eks_cluster(resource: PlanResource, catalog: PriceCatalog, on: date) -> tuple[float, str]:
    """The control plane at its version's support rate on `on`: extended support bills six times standard."""
    minor = _known(resource.props.get("version"), "the Kubernetes version")
    version = kubernetes_version(str(minor))
    if version is None:
        return (
            catalog.unit("eks_cluster_hour") * HOURS_PER_MONTH,
            f"EKS control plane, Kubernetes {minor} (not in the version table: priced at standard support)",
        )
    support = version.support(on)
    if support == "unsupported":
        raise UnknownValue(f"Kubernetes {minor} is past extended support on {on:%Y-%m-%d}: EKS upgrades the cluster")
    service = "eks_cluster_hour" if support == "standard" else "eks_cluster_extended_hour"
    return (
        catalog.unit(service) * HOURS_PER_MONTH,
        f"EKS control plane, Kubernetes {minor} in {support} support on {on:%Y-%m-%d}",
    )


def _gib(quantity: Any) -> float:
    try:
        return quantity_gib(_known(quantity, "the claim's size"))
    except ValueError as error:  # a size no API server would take: not priced, never guessed
        raise UnknownValue(str(error)) from None


def _claim(
    resource: PlanResource, catalog: PriceCatalog, classes: Mapping[str, Mapping[str, str] | str | None]
) -> tuple[float, str]:
    """A claim's volume, at its class's type and performance: EBS classes bill by size and performance,
    instance-store classes nothing beyond their node; a claim bound to a declared volume is priced there."""
    spec = resource.props.get("spec") or {}
    if spec.get("volumeName"):
        return 0.0, f"bound to the pre-provisioned volume {spec['volumeName']} (priced with it)"
    name = _known(spec.get("storageClassName"), "the claim's class")
    if name not in classes:
        raise UnknownValue(f"storage class {name!r} is not in this plan nor in the platform's contract")
    parameters = classes[name]
    if parameters is None:
        raise UnknownValue(f"storage class {name!r}'s parameters are not known until apply")
    if isinstance(parameters, str):
        raise UnknownValue(f"storage class {name!r} {parameters}")
    if "type" not in parameters:
        return 0.0, f"class {name}: local instance store (in the node's price)"
    size = _gib(((spec.get("resources") or {}).get("requests") or {}).get("storage"))
    iops = _number(parameters.get("iops"))
    if parameters.get("iopspergb") is not None:  # the driver's IOPS for this size (it caps them at the type's maximum)
        iops = float(parameters["iopspergb"]) * size
    cost = ebs_monthly(parameters["type"], size, iops, _number(parameters.get("throughput")), catalog.services)
    shown = f", {iops:,.0f} IOPS" if iops is not None else ""
    return cost, f"claim of class {name}: {parameters['type']} {size:g} GiB{shown}"


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


# The parameters a claim's price depends on, as the EBS CSI driver names them (lower case).
PRICED_PARAMETERS = ("iops", "iopspergb", "throughput")


def _ebs_class(parameters: Mapping[str, Any]) -> dict[str, str] | str:
    """The EBS parameters a claim of the class gets (the driver's default type when none is named), or why
    they cannot be priced: one parameter given twice, spelled in two letter cases, with two values (the
    driver takes either), or both `iops` and `iopsPerGB` (the driver refuses the class)."""
    priced = {
        "type": volume_types(parameters),
        **{name: [str(v) for v in given(parameters, name)] for name in PRICED_PARAMETERS},
    }
    for name, values in priced.items():
        if len(set(values)) > 1:
            return f"gives {name} as {' and '.join(sorted(set(values)))} in two spellings: the driver takes either"
    if priced["iops"] and priced["iopspergb"]:
        return "gives both iops and iopsPerGB: the EBS CSI driver refuses to make its volumes"
    return {name: values[0] for name, values in priced.items() if values}


def storage_classes_of(resources: Iterable[PlanResource]) -> dict[str, dict[str, str] | str | None]:
    """The plan's StorageClasses by name: the EBS parameters a claim of each gets ({} for no EBS; None
    while they are unknown; why not, when the driver could take either of two). A class whose name is
    unknown (an autonamed one in a preview) matches no claim, so a claim of it is priced as unknown, never
    as another class."""
    found: dict[str, dict[str, str] | str | None] = {}
    for resource in of_types(read_plan(resources), K8S_STORAGE_CLASS):
        try:
            name = str((resource.props.get("metadata") or {}).get("name"))
        except UnknownValueError:
            continue
        try:
            parameters = class_parameters(resource)
            found[name] = {} if parameters is None else _ebs_class(parameters)
        except UnknownValueError:
            found[name] = None
    return found


def estimate(
    resources: Iterable[PlanResource],
    catalog: PriceCatalog,
    on: date | None = None,
    storage_classes: Mapping[str, Mapping[str, str] | None] | None = None,
) -> CostEstimate:
    """What the resources cost a month; `on` (default: today, UTC) decides the EKS support rate;
    `storage_classes` adds classes the plan uses but does not declare (a team's plan: the platform's)."""
    on = on or datetime.now(UTC).date()
    resources = read_plan(resources)
    templates = {r.urn: r for r in of_types(resources, LAUNCH_TEMPLATE)}
    scheduled = _scheduled_sizes(resources)
    classes = {**(storage_classes or {}), **storage_classes_of(resources)}
    result = CostEstimate()
    for resource in of_types(resources, ASG, EKS_CLUSTER, EKS_NODE_GROUP, EC2_INSTANCE, K8S_CLAIM, *PRICERS):
        try:
            expected = None
            if resource.type == K8S_CLAIM:
                cost, basis = _claim(resource, catalog, classes)
            elif resource.type == ASG and CAPACITY_BLOCK_TAG in (tags_of(resource) or {}):
                cost, basis = _capacity_block_group(resource, catalog, templates)
            elif resource.type == ASG:
                cost, basis, expected = _gpu_group(resource, catalog, templates, scheduled)
            elif resource.type == EKS_CLUSTER:
                cost, basis = _eks_cluster(resource, catalog, on)
            elif resource.type == EKS_NODE_GROUP:
                cost, basis = _node_group(resource, catalog, templates)
            elif resource.type == EC2_INSTANCE:
                cost, basis = _instance(resource, catalog, templates)
            else:
                cost, basis = PRICERS[resource.type](resource, catalog)
            result.lines.append(CostLine(resource.urn, resource.type, round(cost, 2), basis, expected))
        except UnknownValue as unknown:
            result.lines.append(CostLine(resource.urn, resource.type, None, f"unknown: {unknown}"))
        except (TypeError, ValueError, KeyError, AttributeError, ZeroDivisionError) as error:
            # Inputs of a shape no engine writes (a hand-edited plan): not priced, and said so.
            result.lines.append(CostLine(resource.urn, resource.type, None, f"unknown: unreadable inputs ({error!r})"))
        except UnknownValueError as unknown:
            result.lines.append(
                CostLine(resource.urn, resource.type, None, f"unknown: {unknown.message}", waits_on=unknown)
            )
    return result


# The last plan estimate made, for the next reader of the same plan in the same region: a check's budget
# rules and its cost table (by identity, and length: a ReadPlan is read, never changed). The plan is held
# weakly, so that a check's read form of it is freed when the check ends.
_last_estimate: list[Any] = [None, None, None]


def estimate_of_plan(
    resources: ReadPlan, region: str, storage_classes: Mapping[str, Mapping[str, str] | None] | None = None
) -> CostEstimate:
    """`estimate` of a read plan at the region's snapshot prices, made once for every reader of it."""
    resources = read_plan(resources)  # a plain list is read first (and so never matches the one held)
    key = (len(resources), region, storage_classes or None)
    held = _last_estimate[0]
    if held is None or held() is not resources or _last_estimate[1] != key:
        _last_estimate[:] = [
            weakref.ref(resources),
            key,
            estimate(resources, catalog_for(region), storage_classes=storage_classes),
        ]
    made: CostEstimate = _last_estimate[2]
    return made


@cache
def catalog_for(region: str) -> PriceCatalog:
    """The bundled snapshot's prices for a region (read once per process; spot prices are not bundled)."""
    source = SnapshotPriceSource()
    return PriceCatalog(on_demand=source.book(region).on_demand, services=source.service_prices(region))
