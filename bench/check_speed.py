"""How `seedance check` scales: its check (every rule and the cost estimate) over generated plans of 1,000
and 10,000 resources, built by repeating the prod stack's own resources as independent copies: each copy's
names (logical and physical, and every reference to them) carry its own stack prefix, so the plan is one
an account could hold and the gate passes it, and no two copies share a document, a name or a string
object. Every timed run checks a plan generated afresh, as `seedance check` reads one plan per process:
what the process learnt of the last plan (its caches of parsed documents, its strings' hashes) does not
carry over to the next.

Prints resources per second for each size, the 10k/1k time ratio (10 means linear), the share of
the time spent in the slowest rule, and, as the baseline in the same process, the time of every rule
called straight on each resource it judges, without the framework's unknown checks and levels (the
framework's cost is the ratio). A second pass makes about 3 % of the values unknown, as a preview
sends them. Rendering the plan's Helm releases (the gate judges what they install) is timed apart, with
the rules over what they render. Run: .venv/bin/python bench/check_speed.py [--smoke] (--smoke: 100 and 1,000
resources, one pass each, as `make test` runs it so the bench cannot rot unseen)
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from components.cost.estimate import estimate_of_plan
from components.plan.resources import HELM_RELEASE, PlanResource
from components.plan.unknowns import ReadPlan, read_plan
from policies.expectations import stack_policy_config
from policies.framework import (
    load_enforcement,
    rule_settings,
    run_rules,
)
from policies.rules import ALL_RULES
from seedance.check_command import RENDERED_RULES, check, cluster_version, plan_resources, rendered_releases
from seedance.cli import offline_plan
from seedance.stack_input import load_stack

# Every name the prod stack gives, logical or physical, starts with it (its `name_prefix`).
STACK_PREFIX = "seedance-prod"
_runs = iter(range(1_000_000))


def _renamed(resource: PlanResource, prefix: str) -> PlanResource:
    def text(value: str) -> str:
        return value.replace(STACK_PREFIX, prefix)

    return PlanResource(
        text(resource.urn),
        resource.type,
        text(resource.name),
        json.loads(text(json.dumps(resource.props))),
        text(resource.parent) if resource.parent else None,
        tuple(text(d) for d in resource.dependencies),
        text(resource.id) if isinstance(resource.id, str) else resource.id,
    )


def generated(base, count):
    """`count` resources: copies of the base plan, each under a stack prefix no earlier call used."""
    run = next(_runs)
    return [_renamed(base[i % len(base)], f"{STACK_PREFIX}-r{run}c{i // len(base)}") for i in range(count)]


UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


def with_unknowns(value, rng):
    """About 3 % of the leaf values replaced by the engine's unknown sentinel (fresh containers)."""
    if isinstance(value, dict):
        return {k: with_unknowns(v, rng) for k, v in value.items()}
    if isinstance(value, list):
        return [with_unknowns(v, rng) for v in value]
    return UNKNOWN if rng.random() < 0.03 else value


def straight(resources, enforcement, extra):
    """The baseline: each rule called on the plain resources it judges (they hold no unknown: they are
    their own read form), nothing else, and the plan's estimate made once, as a check makes it."""
    resources = ReadPlan(resources)
    for rule in ALL_RULES:
        _level, config = rule_settings(rule, enforcement)
        config.update(extra.get(rule.name, {}))
        if rule.check_resource is not None:
            for resource in resources:
                if rule.resource_types is None or resource.type in rule.resource_types:
                    list(rule.check_resource(resource, config))
        elif rule.check_stack is not None:
            list(rule.check_stack(resources, config))
    estimate_of_plan(resources, "us-east-1")


def best_of(function, repeats: int, plan=None) -> float:
    """The best time of `function`, called on a fresh plan each time when `plan` makes one (untimed)."""
    timings = []
    for _ in range(repeats):
        given = () if plan is None else (plan(),)
        started = time.perf_counter()
        function(*given)
        timings.append(time.perf_counter() - started)
    return min(timings)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="small sizes, one pass: that it runs, not its figures")
    args = parser.parse_args()
    sizes, repeats = ((100, 1_000), 1) if args.smoke else ((1_000, 10_000), 3)
    # The check itself, the headline, is timed as the best of more runs: on a shared 2-core host the best
    # of 3 varied by a third from run to run.
    checks = 1 if args.smoke else 9
    plan, _header = offline_plan("prod", Path(__file__).resolve().parents[1] / "infra", None)
    base = plan_resources(plan)
    enforcement = load_enforcement("prod")
    config = load_stack(None, "prod", None)[1]
    extra = stack_policy_config(config)  # what the gate judges against: the stack config's expectations
    print(
        f"rules: {len(ALL_RULES)}; base plan: prod stack, {len(base)} resources; checks best of {checks}, "
        f"the rest best of {repeats}"
    )
    totals = {}
    for size in sizes:

        def fresh_plan(size=size):
            return generated(base, size)

        findings = len(check(fresh_plan(), "prod", "us-east-1", extra)[0])
        seconds = best_of(lambda resources: check(resources, "prod", "us-east-1", extra), checks, fresh_plan)
        floor = best_of(lambda resources: straight(resources, enforcement, extra), repeats, fresh_plan)
        # Each rule timed alone on a plan read once (else each would pay the scan), a fresh one for each rule.
        per_rule = {
            rule.name: best_of(
                lambda read, rule=rule: run_rules([rule], read, enforcement, extra),
                repeats,
                lambda size=size: read_plan(generated(base, size)),
            )
            for rule in ALL_RULES
        }
        slowest = max(per_rule, key=per_rule.__getitem__)
        totals[size] = seconds
        print(
            f"{size:>6} resources ({findings} findings): {seconds * 1e3:8.1f} ms, {size / seconds:>9,.0f} resources/s, "
            f"{seconds / floor:.2f}x the rules called straight; slowest rule {slowest} takes "
            f"{per_rule[slowest] / sum(per_rule.values()):.0%} of the rules' time"
        )
    small, large = sizes
    print(f"time ratio {large} / {small}: {totals[large] / totals[small]:.1f} (10 is linear)")
    # One plan checked again, its documents parsed and its strings hashed by the run before: about the fresh
    # figure (measured 2026-12-07), so what made earlier rounds' figure (78,534/s that day) was their copies
    # sharing one set of objects inside a plan, not a warm process. A process never meets its plan twice.
    again = generated(base, large)
    check(again, "prod", "us-east-1", extra)
    seconds = best_of(lambda: check(again, "prod", "us-east-1", extra), checks)
    print(
        f"{large:>6} resources, the same plan checked again: {seconds * 1e3:8.1f} ms, "
        f"{large / seconds:>9,.0f} resources/s"
    )
    rng = random.Random(7)

    def previewed():
        return [replace(r, props=with_unknowns(r.props, rng)) for r in generated(base, large)]

    seconds = best_of(lambda resources: check(resources, "prod", "us-east-1", extra), checks, previewed)
    print(
        f"{large:>6} resources, ~3 % of values unknown: {seconds * 1e3:8.1f} ms, {large / seconds:>9,.0f} resources/s"
    )
    version = cluster_version(base, config)
    started = time.perf_counter()
    rendered, unrendered = rendered_releases(base, version)
    rendering = time.perf_counter() - started
    judging = best_of(lambda: run_rules(RENDERED_RULES, rendered, enforcement, extra), repeats)
    releases = sum(1 for r in base if r.type == HELM_RELEASE)
    print(
        f"charts: {releases} releases rendered in {rendering * 1e3:.0f} ms ({len(rendered)} objects, "
        f"{len(unrendered)} not rendered), judged in {judging * 1e3:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
