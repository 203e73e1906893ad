"""The CI cost gate's arithmetic at its edges: windows, OpenCost's allocation answers (sums, coverage at
exactly 90 %, refused values), Prometheus's instant answers, and the verdict at the threshold."""

import math

import pytest

from components.cost.gate import GateInputError, allocation_cost, instant_value, judge, window_hours


@pytest.mark.parametrize("text, hours", [("1h", 1), ("36h", 36), ("1d", 24), ("7d", 168), ("30d", 720), ("720h", 720)])
def test_a_window_is_hours_or_days_up_to_thirty_days(text, hours):
    assert window_hours(text) == hours


@pytest.mark.parametrize("text", ["0h", "0d", "721h", "31d", "1000h", "7d\n", " 7d", "7D", "1w", "", "d", "7"])
def test_any_other_window_is_refused_naming_it(text):
    with pytest.raises(GateInputError, match=r"--window = .*: allowed: 1h to 30d, such as 7d or 36h"):
        window_hours(text)


def answer(*steps):
    return {"code": 200, "data": list(steps)}


def test_the_namespace_cost_is_summed_over_the_steps_it_appears_in():
    document = answer(
        {"triton-video": {"totalCost": 1.5, "minutes": 60}, "other": {"totalCost": 99, "minutes": 60}},
        None,
        {"other": {"totalCost": 5, "minutes": 60}},
        {"triton-video": {"totalCost": 2.25, "minutes": 60.0}},
    )
    assert allocation_cost(document, "triton-video", 2) == 3.75


# Judged when OpenCost holds 90 % to 105 % of the window (issue 37, item 8: 1e300 minutes is no allocation).
@pytest.mark.parametrize(
    "minutes, refusal",
    [
        (108, None),
        (107.9, "OpenCost holds 2 h of the 2 h window for ns"),
        (120, None),
        (126, None),
        (126.1, "more than the window holds"),
        (1e300, "more than the window holds"),
    ],
)
def test_a_window_is_judged_only_when_opencost_holds_ninety_to_a_hundred_and_five_percent_of_it(minutes, refusal):
    document = answer({"ns": {"totalCost": 1.0, "minutes": minutes}})
    if refusal is None:
        assert allocation_cost(document, "ns", 2) == 1.0
    else:
        with pytest.raises(GateInputError, match=refusal):
            allocation_cost(document, "ns", 2)


def test_minutes_that_are_not_a_number_cover_nothing():
    for minutes in (True, "60", None, math.inf):
        with pytest.raises(GateInputError, match="OpenCost holds 0 h of the 1 h window"):
            allocation_cost(answer({"ns": {"totalCost": 1.0, "minutes": minutes}}), "ns", 1)


@pytest.mark.parametrize("cost", [-0.01, math.inf, math.nan, True, "1.0", None])
def test_a_cost_that_is_not_a_cost_is_refused(cost):
    with pytest.raises(GateInputError, match=r"OpenCost's totalCost for ns is .*, not a cost"):
        allocation_cost(answer({"ns": {"totalCost": cost, "minutes": 60}}), "ns", 1)


def test_a_zero_cost_is_refused_not_judged_cheap():
    """Issue 37, item 8: a set that holds GPU nodes costs something; $0 means OpenCost has no prices, and a
    gate that read it as cheap would pass anything."""
    with pytest.raises(GateInputError, match=r"prices ns at \$0 over 1 h"):
        allocation_cost(answer({"ns": {"totalCost": 0, "minutes": 60}}), "ns", 1)
    assert allocation_cost(answer({"ns": {"totalCost": 0.01, "minutes": 60}}), "ns", 1) == 0.01


@pytest.mark.parametrize(
    "document", [None, [], {"code": 500, "data": []}, {"code": 200, "data": {}}, {"code": 200}, "<html>"]
)
def test_an_answer_that_is_not_an_allocation_result_is_refused(document):
    with pytest.raises(GateInputError, match=r"OpenCost answered .*, not an allocation result \(code 200, data\)"):
        allocation_cost(document, "ns", 1)


def test_a_namespace_with_no_cost_is_refused_not_judged_free():
    with pytest.raises(GateInputError, match="OpenCost holds no cost for namespace ns in the window"):
        allocation_cost(answer({"other": {"totalCost": 1, "minutes": 60}}, "not a step", None), "ns", 1)


def vector(*values):
    return {
        "status": "success",
        "data": {"resultType": "vector", "result": [{"metric": {}, "value": [1700000000, v]} for v in values]},
    }


def test_the_one_value_of_an_instant_vector():
    assert instant_value(vector("1234.5"), "q") == 1234.5
    assert instant_value(vector("0"), "q") == 0.0


@pytest.mark.parametrize(
    "document, message",
    [
        (vector(), r"Prometheus has no series for q"),
        (vector("1", "2"), r"Prometheus has 2 series for q"),
        (vector("NaN"), r"Prometheus's value for q is nan"),
        (vector("-1"), r"Prometheus's value for q is -1.0"),
        (vector("+Inf"), r"Prometheus's value for q is inf"),
        (vector("many"), r"Prometheus's value for q is not a number"),
        ({"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}}]}}, r"is not a number"),
        ({"status": "error", "data": {"resultType": "vector", "result": []}}, r"not a vector"),
        ({"status": "success", "data": {"resultType": "matrix", "result": []}}, r"not a vector"),
        ({"status": "success"}, r"not a vector"),
        ("<html>", r"not a vector"),
    ],
)
def test_any_other_prometheus_answer_is_refused_naming_it(document, message):
    with pytest.raises(GateInputError, match=message):
        instant_value(document, "q")


def test_the_verdict_at_the_threshold():
    at = judge(cost_usd=5.0, requests=1000.0, threshold=5.0)
    assert at.usd_per_1000 == 5.0 and at.passed
    above = judge(cost_usd=5.01, requests=1000.0, threshold=5.0)
    assert not above.passed
    assert above.line("video", "7d") == (
        "video: $5.01 over 7d for 1,000 successful requests: $5.0100 per 1,000 "
        "requests (200 requests per dollar); threshold $5.0000: FAILS"
    )
    free = judge(cost_usd=0.0, requests=10.0, threshold=1.0)
    assert (
        free.passed
        and "(unbounded requests per dollar)" in free.line("video", "1d")
        and "passes" in free.line("v", "1d")
    )


@pytest.mark.parametrize("requests", [0.0, -1.0])
def test_no_requests_cannot_be_judged(requests):
    with pytest.raises(GateInputError, match="no successful requests in the window"):
        judge(1.0, requests, 1.0)


def test_the_refusals_say_the_whole_of_what_to_do():
    """The lines a release engineer reads, whole: what is wrong and what to do about it."""
    with pytest.raises(GateInputError) as missing:
        allocation_cost(answer({"other": {"totalCost": 1, "minutes": 60}}), "ns", 1)
    assert str(missing.value) == (
        "OpenCost holds no cost for namespace ns in the window (is the set deployed, and "
        "OpenCost running as long as the window?)"
    )
    with pytest.raises(GateInputError) as short:
        allocation_cost(answer({"ns": {"totalCost": 1, "minutes": 60}}), "ns", 2)
    assert str(short.value) == (
        "OpenCost holds 1 h of the 2 h window for ns (its history is Prometheus's: "
        "monitoring.retention_hours, and none before its last restart); judge a shorter --window"
    )
    with pytest.raises(GateInputError) as none:
        instant_value(vector(), "q")
    assert str(none.value) == (
        "Prometheus has no series for q (the set's requests are counted by Triton's nv_inference_request_success)"
    )
    with pytest.raises(GateInputError) as empty:
        judge(1.0, 0.0, 1.0)
    assert str(empty.value) == "no successful requests in the window: the cost per request cannot be judged"


def test_a_long_answer_is_quoted_cut_to_its_first_characters():
    long = {"code": 500, "body": "x" * 500}
    with pytest.raises(GateInputError) as opencost:
        allocation_cost(long, "ns", 1)
    assert str(opencost.value) == f"OpenCost answered {str(long)[:120]!r}, not an allocation result (code 200, data)"
    with pytest.raises(GateInputError) as prometheus:
        instant_value(long, "q")
    assert str(prometheus.value) == f"Prometheus answered {str(long)[:120]!r} to q, not a vector"
    odd = {"status": "success", "data": {"resultType": "vector", "result": [{"metric": {"x": "y" * 300}}]}}
    with pytest.raises(GateInputError) as value:
        instant_value(odd, "q")
    assert str(value.value) == f"Prometheus's value for q is not a number: {odd['data']['result'][0]!r}"[:200]


def test_an_entry_that_is_not_a_mapping_is_refused_as_no_cost():
    with pytest.raises(GateInputError, match="OpenCost's totalCost for ns is None, not a cost"):
        allocation_cost(answer({"ns": "1.0"}), "ns", 1)


def test_fewer_than_one_request_is_still_judged():
    assert judge(1.0, 0.5, 5000.0).usd_per_1000 == 2000.0
