"""The planner's explanations, whole, for the decisions a reviewer meets most (tests/golden/capacity/
explanations.json): spot taken, spot refused inside and past the band (price noise either way), stale and
missing prices, an RI as the reference, placement scores too low, a targeted reservation. The lock and the
pull-request comment show these words; a change to them shows in review.

Regenerate after an intended change, then review the diff:
    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/components/capacity/test_explanation.py
"""

import json
import os
from datetime import timedelta
from pathlib import Path

from components.capacity.plan import PlannerSettings
from components.capacity.planner import decide
from components.capacity.rules import placement_questions
from components.pricing.prices import InterruptionFrequency
from components.pricing.reserved import CAPACITY_RESERVATION, ReservedHolding
from tests.components.markets import NOW, ON_DEMAND, book, request

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "capacity" / "explanations.json"
TRAINING = ("g6.12xlarge", "g5.12xlarge", "g4dn.12xlarge")
SERVING = ("g6.xlarge", "g5.xlarge", "g4dn.xlarge")
REFERENCE = ON_DEMAND["g4dn.12xlarge"] / 4


def spot_at(ratio):
    return {t: ratio * REFERENCE / (ON_DEMAND[t] / 4) for t in TRAINING}


def scored(group, whole, part):
    return {q: s for q, s in zip(placement_questions(group), (whole, part))}


def cases() -> dict:
    training = request(types=TRAINING)
    serving = request("online", SERVING, min_gpus=4, desired=6, max_gpus=24)
    current = decide(training, book(spot_at(0.5)), NOW).plan
    on_demand_only = decide(training, book(spot_at(1.2)), NOW).plan
    reserved = ReservedHolding("g6.12xlarge", 1, 2.0, "test RI")
    reservation = ReservedHolding(
        "g6.xlarge",
        1,
        ON_DEMAND["g6.xlarge"],
        "test",
        CAPACITY_RESERVATION,
        "cr-0123456789abcdef0",
        "us-east-1b",
        NOW + timedelta(days=30),
        True,
    )
    partly_stale = book(spot_at(0.4))
    for key in [k for k in partly_stale.spot if k[1] == "us-east-1c"]:
        partly_stale.spot[key] = partly_stale.spot[key].__class__(
            partly_stale.spot[key].usd_per_hour, NOW - timedelta(hours=9), "old"
        )
    del partly_stale.spot[("g5.12xlarge", "us-east-1b")]
    old_frequency = book(spot_at(0.4))
    old_frequency.interruptions = {
        t: InterruptionFrequency(0.02, NOW - timedelta(days=60), "advisor") for t in TRAINING
    }
    one_cheap_zone = book(spot_at(1.3))
    for instance_type in TRAINING:
        price = one_cheap_zone.spot[(instance_type, "us-east-1a")]
        one_cheap_zone.spot[(instance_type, "us-east-1a")] = price.__class__(
            price.usd_per_hour * 0.4 / 1.3, price.observed_at, price.source
        )
    # g4dn (the cheapest on-demand GPU) has no spot price: on-demand GPUs go on g6, dearer, and spot near
    # the reference no longer pays for it.
    dearer_base = book({t: r for t, r in spot_at(0.99).items() if t != "g4dn.12xlarge"})
    decisions = {
        "spot taken": decide(training, book(spot_at(0.4)), NOW),
        "spot refused past the band, noise below": decide(training, book(spot_at(1.2)), NOW, current),
        "spot kept inside the band": decide(training, book(spot_at(1.05)), NOW, current),
        "spot refused at entry, noise above": decide(training, book(spot_at(0.97)), NOW, on_demand_only),
        "stale prices kept": decide(training, book(spot_at(0.3), age=timedelta(hours=7)), NOW, current),
        "no spot price": decide(training, book({}), NOW),
        "partly stale and missing zones": decide(training, partly_stale, NOW),
        "old interruption data": decide(training, old_frequency, NOW),
        "an RI as the reference": decide(request(types=TRAINING, holdings=(reserved,)), book(spot_at(0.56)), NOW),
        "with a 0.6 guard": decide(training, book(spot_at(0.65)), NOW, settings=PlannerSettings(spot_price_ratio=0.6)),
        "placement too low": decide(
            serving, book({t: 0.25 for t in SERVING}, scores=scored(serving, (5, 4, 5), (9, 5, 9))), NOW
        ),
        "refused: one cheap zone of three": decide(training, one_cheap_zone, NOW),
        "refused: a dearer on-demand type": decide(training, dearer_base, NOW),
        "refused: a dearer on-demand type, current spot plan": decide(training, dearer_base, NOW, current),
        "refused: a dearer on-demand type, current on-demand plan": decide(training, dearer_base, NOW, on_demand_only),
        "a targeted reservation": decide(
            request("online", SERVING, min_gpus=4, desired=6, max_gpus=24, holdings=(reservation,)),
            book({t: 0.25 for t in SERVING}),
            NOW,
        ),
    }
    return {
        name: {
            "rule": d.rule,
            "changed": d.changed,
            "reasons": list(d.reasons),
            "explanation": list(d.plan.explanation),
        }
        for name, d in decisions.items()
    }


def test_the_explanations_match_their_golden_file():
    found = cases()
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    assert found == json.loads(GOLDEN.read_text()), f"regenerate: UPDATE_GOLDEN=1 pytest {__file__}"
