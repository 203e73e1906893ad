"""A stack with a Savings Plan and a capacity reservation (issue 38): the decision puts them in the
on-demand base in that order with the reasons shown, the group asks EC2 Auto Scaling to fill
reservations first, the lock records them, and a live read that fails never holds less than the lock."""

import yaml

from components.capacity.config import CapacityReservationConfig, SavingsPlanConfig
from components.capacity.lock import build_lock, lock_path, read_lock, render_lock
from components.pricing.prices import PriceSourceError
from components.pricing.commitments import SavingsPlanCommitment
from components.stack.capacity import decide_stack, stack_holdings
from seedance.cli import offline_plan
from tests.components.markets import NOW, ZONES, FakeLiveSource
from tests.stacks import REPO, stack_config

SAVINGS_PLAN = {"id": "sp-0a1b2c3d", "unused_usd_per_hour": 1.6, "rates": {"g6.xlarge": 0.5314},
                "ends": "2027-09-30T00:00:00Z"}
RESERVATION = {"id": "cr-0123456789abcdef0", "instance_type": "g6.xlarge", "zone": "us-east-1b", "count": 1,
               "targeted": True}


def committed_stack_file(tmp_path):
    document = yaml.safe_load((REPO / "stacks" / "Pulumi.prod.yaml").read_text())
    capacity = document["config"].setdefault("seedance-gpu:capacity", {})
    capacity.update(savings_plans=[SAVINGS_PLAN], capacity_reservations=[RESERVATION])
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def test_the_offline_plan_holds_the_savings_plan_then_the_reservation_and_fills_reservations_first(tmp_path):
    plan, _header = offline_plan("prod", REPO / "infra", committed_stack_file(tmp_path))
    (online,) = [r for r in plan.of_type("aws:autoscaling/group:Group") if r.name.endswith("-online-asg")]
    assert online.inputs["capacityReservationSpecification"] == {
        "capacityReservationPreference": "capacity-reservations-first",
        "capacityReservationTarget": {"capacityReservationIds": ["cr-0123456789abcdef0"]}}
    batch = [r for r in plan.of_type("aws:autoscaling/group:Group") if r.name.endswith("-batch-asg")]
    assert "capacityReservationSpecification" not in batch[0].inputs  # it lists no g6.xlarge
    tags = {t["key"]: t["value"] for t in online.inputs["tags"]}
    # Priced as the decision priced them. Online runs 6 instances: 4 are the stack's RIs and 1 is reserved,
    # so the plan's headroom ($1.6/h: 3 instances at $0.5314) pays for the 1 left, not for instances not run.
    assert tags["seedance.io/reserved-instances"].split() == [
        "g6.xlarge=1@0.531400", "g6.xlarge=4@0.507000", "g6.xlarge=1@0.804800"]


def test_the_decision_explains_the_order_and_the_lock_records_what_each_holding_is(tmp_path):
    config = stack_config("prod")
    capacity = config.capacity.model_copy(update={
        "savings_plans": [SavingsPlanConfig.model_validate(SAVINGS_PLAN)],
        "capacity_reservations": [CapacityReservationConfig.model_validate(RESERVATION)]})
    config = config.model_copy(update={"capacity": capacity})
    holdings, commitments = stack_holdings(config, None, None, NOW)
    result = decide_stack(config, ZONES, [FakeLiveSource(0.3)], holdings, {}, NOW, commitments)
    online = next(d.plan for d in result.decisions if d.plan.group == "online")
    text = "\n".join(online.explanation)
    order = [text.index(s) for s in ("held by savings-plan sp-0a1b2c3d", "reserved g6.xlarge",
                                     "held by capacity-reservation cr-0123456789abcdef0")]
    assert order == sorted(order)
    assert "on-demand base 6 GPUs = max(reserved 6 (1 savings-plan + 4 reserved-instance + 1 capacity-reservation)" in text
    lock = build_lock(None, "prod", config.region, NOW, result.source, config.capacity.settings(), result.decisions,
                      result.book)
    lock_path(tmp_path, "prod").write_text(render_lock(lock))
    recorded = [h for h in read_lock(lock_path(tmp_path, "prod")).plans()["online"].mix.holdings if h.reference]
    assert {(h.kind, h.reference, h.count) for h in recorded} == {("savings-plan", "sp-0a1b2c3d", 1),
                                                                  ("capacity-reservation", "cr-0123456789abcdef0", 1)}


class CommittedAccount(FakeLiveSource):
    def __init__(self, fail_commitments=False, **kwargs):
        super().__init__(**kwargs)
        self.fail_commitments = fail_commitments

    def savings_plans(self, region, now):
        if self.fail_commitments:
            raise PriceSourceError("describe_savings_plans: AccessDeniedException")
        return [SavingsPlanCommitment("sp-live", "Compute", "", "", 5.0, 1.6, {"g6.xlarge": 0.5314},
                                      NOW.replace(year=2028), "describe_savings_plans")]


def test_a_refused_commitment_read_falls_back_to_the_lock_and_never_to_more_spot():
    config = stack_config("prod")
    config = config.model_copy(update={"capacity": config.capacity.model_copy(update={"commitments": "live"})})
    holdings, commitments = stack_holdings(config, None, CommittedAccount(), NOW)
    first = decide_stack(config, ZONES, [FakeLiveSource(0.3)], holdings, {}, NOW, commitments)
    lock = build_lock(None, "prod", config.region, NOW, first.source, config.capacity.settings(), first.decisions,
                      first.book)
    held, commitments = stack_holdings(config, lock, CommittedAccount(fail_commitments=True), NOW)
    assert commitments == [] and any(h.reference == "sp-live" and h.count == 2 for h in held)  # 6 run, 4 are RIs
    again = decide_stack(config, ZONES, [FakeLiveSource(0.3)], held, lock.plans(), NOW)
    before = {d.plan.group: d.plan.on_demand_base_gpus for d in first.decisions}
    after = {d.plan.group: d.plan.on_demand_base_gpus for d in again.decisions}
    assert after == before  # the same commitment in the base: no unit moves to spot
