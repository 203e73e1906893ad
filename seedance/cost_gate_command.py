"""`seedance cost-gate --stack <env> --service <set> [--window 7d]`: the source's CI cost gate.

A serving set's cost over the window (OpenCost's allocation API, by namespace) per 1,000 successful
requests (Triton's `nv_inference_request_success`, from Prometheus), against the set's
`max_usd_per_1000_requests`. Exit 1 with the figures when it is above, 0 when not, 2 on bad input
or when either API cannot be read. Both APIs are in-cluster; from CI, port-forward them (README).
"""

from __future__ import annotations

import argparse
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

from components.cost.gate import GateInputError, allocation_cost, instant_value, judge, requests_query, window_hours
from seedance.deadline import timeout_seconds, within
from seedance.stack_input import load_stack

TIMEOUT_SECONDS = 30
MAX_ANSWER_BYTES = 32 << 20


def fetch_json(url: str) -> Any:
    """GET and parse, with one clear error for anything that is not a JSON answer."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
            body = response.read(MAX_ANSWER_BYTES + 1)
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise GateInputError(f"cannot read {url}: {reason}") from None
    if len(body) > MAX_ANSWER_BYTES:
        raise GateInputError(f"{url} answered more than {MAX_ANSWER_BYTES:,} bytes")
    try:
        return json.loads(body)
    except ValueError:
        raise GateInputError(f"{url} did not answer JSON: {body[:80]!r}") from None
    except RecursionError:
        raise GateInputError(f"{url} answered JSON nested too deeply to be an answer of its API") from None


def _api(flag: str, url: str) -> str:
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise GateInputError(f"{flag} = {url!r}: allowed: http(s)://<host>[:<port>] (the port-forwarded API)")
    return url.rstrip("/")


# Tests replace this to answer from a local server or recorded documents.
get: Callable[[str], Any] = fetch_json


def run(args: argparse.Namespace) -> int:
    _project, config = load_stack(args.program, args.stack, args.stack_file)
    sets = {s.name: s for s in config.serving}
    if args.service not in sets:
        raise GateInputError(
            f"--service = {args.service!r}: allowed: {', '.join(sets) or 'none (the stack serves nothing)'}"
        )
    serving = sets[args.service]
    if serving.max_usd_per_1000_requests is None:
        raise GateInputError(
            f"serving[{list(sets).index(args.service)}].max_usd_per_1000_requests is not set: the "
            "gate has no threshold for this set"
        )
    hours = window_hours(args.window)
    opencost, prometheus = _api("--opencost-url", args.opencost_url), _api("--prometheus-url", args.prometheus_url)
    query = requests_query(serving.namespace, hours)

    def read() -> tuple[Any, Any]:
        return (
            get(
                f"{opencost}/allocation?"
                + urllib.parse.urlencode({"window": f"{hours}h", "aggregate": "namespace", "accumulate": "true"})
            ),
            get(f"{prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": query})),
        )

    try:
        allocation, answer = within(args.timeout, read)
    except TimeoutError as error:
        raise GateInputError(f"OpenCost and Prometheus gave {error} (--timeout)") from None
    cost = allocation_cost(allocation, serving.namespace, hours)
    requests = instant_value(answer, query)
    result = judge(cost, requests, serving.max_usd_per_1000_requests)
    print(result.line(args.service, args.window))
    return 0 if result.passed else 1


def register(commands: Any, stack_arguments: Callable) -> None:
    gate = commands.add_parser("cost-gate", help="fail a release whose cost per 1,000 requests is above the threshold")
    stack_arguments(gate)
    gate.add_argument("--service", required=True, help="the serving set (serving[].name)")
    gate.add_argument("--window", default="7d", help="how far back: 1h to 30d (default 7d)")
    gate.add_argument("--opencost-url", default="http://localhost:9003", help="OpenCost's API (port-forwarded)")
    gate.add_argument("--prometheus-url", default="http://localhost:9090", help="Prometheus's API (port-forwarded)")
    gate.add_argument(
        "--timeout",
        type=timeout_seconds,
        default=60.0,
        metavar="SECONDS",
        help="one deadline for both APIs (default 60); past it: exit 2",
    )
    gate.set_defaults(run=run)
