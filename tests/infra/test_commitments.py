"""A stack with a Savings Plan and a capacity reservation (issue 38): the decision puts them in the
on-demand base in that order with the reasons shown, the group asks EC2 Auto Scaling to fill
reservations first, the lock records them, and a live read that fails never holds less than the lock."""

import yaml

from components.capacity.config import CapacityReservationConfig, SavingsPlanConfig
from components.capacity.lock import build_lock, lock_path, read_lock, render_lock
from components.pricing.commitments import SavingsPlanCommitment
from components.pricing.prices import PriceSourceError
from components.stack.capacity import decide_stack, program_capacity, stack_holdings
from seedance.cli import offline_plan
from tests.components.markets import NOW, ZONES, FakeLiveSource
from tests.stacks import REPO, stack_config

SAVINGS_PLAN = {
    "id": "sp-0a1b2c3d",
    "unused_usd_per_hour": 1.6,
    "rates": {"g6.xlarge": 0.5314},
    "ends": "2027-09-30T00:00:00Z",
}
RESERVATION = {
    "id": "cr-0123456789abcdef0",
    "instance_type": "g6.xlarge",
    "zone": "us-east-1b",
    "count": 1,
    "targeted": True,
}


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
        "capacityReservationTarget": {"capacityReservationIds": ["cr-0123456789abcdef0"]},
    }
    batch = [r for r in plan.of_type("aws:autoscaling/group:Group") if r.name.endswith("-batch-asg")]
    assert "capacityReservationSpecification" not in batch[0].inputs  # it lists no g6.xlarge
    tags = {t["key"]: t["value"] for t in online.inputs["tags"]}
    # Priced as the decision priced them. Online runs 6 instances: 4 are the stack's RIs and 1 is reserved,
    # so the plan's headroom ($1.6/h: 3 instances at $0.5314) pays for the 1 left, not for instances not run.
    assert tags["seedance.io/reserved-instances"].split() == [
        "g6.xlarge=1@0.531400",
        "g6.xlarge=4@0.507000",
        "g6.xlarge=1@0.804800",
    ]


def test_the_decision_explains_the_order_and_the_lock_records_what_each_holding_is(tmp_path):
    config = stack_config("prod")
    capacity = config.capacity.model_copy(
        update={
            "savings_plans": [SavingsPlanConfig.model_validate(SAVINGS_PLAN)],
            "capacity_reservations": [CapacityReservationConfig.model_validate(RESERVATION)],
        }
    )
    config = config.model_copy(update={"capacity": capacity})
    holdings, commitments = stack_holdings(config, None, None, NOW)
    result = decide_stack(config, ZONES, [FakeLiveSource(0.3)], holdings, {}, NOW, commitments)
    online = next(d.plan for d in result.decisions if d.plan.group == "online")
    text = "\n".join(online.explanation)
    order = [
        text.index(s)
        for s in (
            "held by savings-plan sp-0a1b2c3d",
            "reserved g6.xlarge",
            "held by capacity-reservation cr-0123456789abcdef0",
        )
    ]
    assert order == sorted(order)
    assert (
        "on-demand base 6 GPUs = max(reserved 6 (1 savings-plan + 4 reserved-instance + 1 capacity-reservation)" in text
    )
    lock = build_lock(
        None, "prod", config.region, NOW, result.source, config.capacity.settings(), result.decisions, result.book
    )
    lock_path(tmp_path, "prod").write_text(render_lock(lock))
    recorded = [h for h in read_lock(lock_path(tmp_path, "prod")).plans()["online"].mix.holdings if h.reference]
    assert {(h.kind, h.reference, h.count) for h in recorded} == {
        ("savings-plan", "sp-0a1b2c3d", 1),
        ("capacity-reservation", "cr-0123456789abcdef0", 1),
    }


class CommittedAccount(FakeLiveSource):
    """An account with a Compute Savings Plan that covers batch's and online's types, Cost Explorer reporting
    `unused` (batch takes 2 x g6e.12xlarge, $14.60; online, which has 4 RIs of its 6, 2 x g6.xlarge, $1.06)."""

    def __init__(self, unused=16.0, fail_commitments=False, **kwargs):
        super().__init__(**kwargs)
        self.unused, self.fail_commitments = unused, fail_commitments

    def savings_plans(self, region, now, instance_types=()):
        if self.fail_commitments:
            raise PriceSourceError("describe_savings_plans: AccessDeniedException")
        return [
            SavingsPlanCommitment(
                "sp-live",
                "Compute",
                "",
                "",
                20.0,
                self.unused,
                {"g6e.12xlarge": 7.3, "g6.xlarge": 0.53},
                NOW.replace(year=2028),
                "describe_savings_plans",
            )
        ]


def live_commitments(tmp_path):
    config = stack_config("prod")
    config = config.model_copy(update={"capacity": config.capacity.model_copy(update={"commitments": "live"})})
    holdings, commitments = stack_holdings(config, None, CommittedAccount(), NOW)
    decided = decide_stack(config, ZONES, [FakeLiveSource(0.3)], holdings, {}, NOW, commitments)
    lock = build_lock(
        None, "prod", config.region, NOW, decided.source, config.capacity.settings(), decided.decisions, decided.book
    )
    lock_path(tmp_path, "prod").write_text(render_lock(lock))
    return config, decided, read_lock(lock_path(tmp_path, "prod"))


def bases(decisions):
    return {d.plan.group: d.plan.on_demand_base_gpus for d in decisions}


def test_a_lock_holding_a_savings_plan_deploys_as_decided(tmp_path):
    """The reviewed lock's holdings are rebuilt group by group as decided, so `pulumi up` finds the lock
    matches (it once listed them in another order and re-split them by max size: every deploy refused)."""
    config, decided, lock = live_commitments(tmp_path)
    assert bases(decided.decisions)["batch"] == 8  # 2 x g6e.12xlarge under the plan ($16 / $7.30), above the baseline 2
    online = next(d.plan for d in decided.decisions if d.plan.group == "online")
    assert [h.kind for h in online.mix.holdings] == ["savings-plan", "reserved-instance"]  # two kinds in one group
    capacity = program_capacity(config, "prod", ZONES, tmp_path, NOW)
    assert capacity.plans == lock.plans()


def test_a_refused_commitment_read_falls_back_to_the_lock_and_never_to_more_spot(tmp_path):
    config, decided, lock = live_commitments(tmp_path)
    notes = []
    held, commitments = stack_holdings(config, lock, CommittedAccount(fail_commitments=True), NOW, notes)
    assert [(c.plan_id, round(c.unused_per_hour, 6)) for c in commitments] == [("sp-live", 15.66)]  # what was held
    assert notes == [
        "Savings Plans unavailable (describe_savings_plans: AccessDeniedException): the lock's record of them is used"
    ]
    again = decide_stack(config, ZONES, [FakeLiveSource(0.3)], held, lock.plans(), NOW, commitments)
    assert bases(again.decisions) == bases(decided.decisions) and not any(d.changed for d in again.decisions)


def test_the_plans_own_use_is_added_back_so_the_next_day_holds_as_much(tmp_path):
    """Cost Explorer counts what the stack's groups used of the plan as used: a day after the decision the
    headroom it reports is that much smaller. Added back, the base stays; not added back, batch would
    drop to its baseline and put those units on spot."""
    config, decided, lock = live_commitments(tmp_path)
    next_day = CommittedAccount(unused=16.0 - 15.66)
    held, commitments = stack_holdings(config, lock, next_day, NOW)
    assert round(commitments[0].unused_per_hour, 6) == 16.0
    again = decide_stack(config, ZONES, [FakeLiveSource(0.3)], held, lock.plans(), NOW, commitments)
    assert bases(again.decisions) == bases(decided.decisions)
    held, commitments = stack_holdings(config, None, next_day, NOW)  # without the lock's record
    assert bases(decide_stack(config, ZONES, [FakeLiveSource(0.3)], held, {}, NOW, commitments).decisions)["batch"] == 2
