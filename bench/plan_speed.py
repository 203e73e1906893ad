"""Time `seedance plan --stack prod` in-process against a flat program registering the same
number of plain resources under the same mocks, in one run. Prints both and the ratio.

Usage: .venv/bin/python bench/plan_speed.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from seedance.cli import offline_plan
from seedance.offline_cloud import OfflineCloud
from seedance_client.engine import run_program

REPO = Path(__file__).resolve().parent.parent
T = TypeVar("T")


def _timed(fn: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    offline_plan("prod", REPO / "infra", None)  # warm imports once, for both sides
    stack_times, count = [], 0
    for _ in range(args.repeat):
        elapsed, (plan, _) = _timed(lambda: offline_plan("prod", REPO / "infra", None))
        stack_times.append(elapsed)
        count = len(plan.resources)

    with tempfile.TemporaryDirectory() as tmp:
        program = Path(tmp) / "flat"
        program.mkdir()
        (program / "__main__.py").write_text(
            "import pulumi_aws as aws\n"
            f"for i in range({count}):\n"
            "    aws.ec2.Vpc(f'vpc-{i}', cidr_block='10.0.0.0/16', tags={'team': 'bench'})\n"
        )
        flat_times = []
        for _ in range(args.repeat):
            elapsed, _ = _timed(
                lambda: run_program(program, project="flat", stack="bench", config={}, mocks=OfflineCloud("us-east-1"))
            )
            flat_times.append(elapsed)

    stack_median, flat_median = statistics.median(stack_times), statistics.median(flat_times)
    print(f"resources per run:           {count}")
    print(f"seedance plan --stack prod:  {stack_median * 1000:8.1f} ms (median of {args.repeat})")
    print(f"flat program, same count:    {flat_median * 1000:8.1f} ms (median of {args.repeat})")
    print(f"ratio stack / flat:          {stack_median / flat_median:8.2f}")


if __name__ == "__main__":
    main()
