"""A plan document (`seedance plan --json`) read as untrusted input: every resource well formed, URNs
unique, and every quantity a cost or a rule reads a finite number of zero or more. Pure.

A plan file is edited by hand in a pull request as easily as a stack file: a volume of size -150000
would otherwise lower the estimate's total below the budget, and NaN would compare false with every
limit, so both would pass the mandatory budget rule.
"""

from __future__ import annotations

import math
from typing import Any

from components.plan.resources import PlanResource, is_unknown, reveal_secrets

# Inputs the estimate and the rules read as amounts: sizes, IOPS, throughput, counts and capacities.
QUANTITY_INPUTS = frozenset(
    {
        "size",
        "iops",
        "throughput",
        "volumeSize",
        "desiredCapacity",
        "minSize",
        "maxSize",
        "desiredSize",
        "onDemandBaseCapacity",
        "onDemandPercentageAboveBaseCapacity",
        "weightedCapacity",
        "replicas",
        "minReplicas",
        "maxReplicas",
        "retentionInDays",
        "limitAmount",
        "threshold",
        "httpPutResponseHopLimit",
    }
)


class PlanDocumentError(Exception):
    """The plan document is malformed; the message names the resource and the field."""


def _quantity_problem(value: Any) -> str | None:
    if value is None or is_unknown(value):
        return None
    if isinstance(value, bool):
        return "is a boolean, not a number"
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return "is not a number"
    else:
        return "is not a number"
    if math.isnan(number) or math.isinf(number):
        return "is not a finite number"
    if number < 0:
        return "is negative"
    return None


def _check_quantities(value: Any, path: str, urn: str) -> None:
    pending = [(value, path)]
    while pending:
        item, where = pending.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                here = f"{where}.{key}" if where else str(key)
                if key in QUANTITY_INPUTS:
                    problem = _quantity_problem(child)  # a dict or a list is not a number either
                    if (
                        problem is None
                        and key == "weightedCapacity"
                        and child is not None
                        and not is_unknown(child)
                        and float(child) == 0
                    ):
                        problem = "is zero"
                    if problem:
                        raise PlanDocumentError(
                            f"resource {urn}: inputs.{here} = {child!r} {problem}; a quantity "
                            "must be a finite number of zero or more"
                        )
                pending.append((child, here))
        elif isinstance(item, list):
            pending += [(child, f"{where}[{index}]") for index, child in enumerate(item)]
        elif isinstance(item, float) and (math.isnan(item) or math.isinf(item)):
            raise PlanDocumentError(f"resource {urn}: inputs.{where} = {item!r} is not a finite number")


def plan_document_resources(document: Any) -> list[PlanResource]:
    """The document's resources, refused with the resource and field named at the first problem."""
    if not isinstance(document, dict) or not isinstance(document.get("resources"), list):
        raise PlanDocumentError(
            "not a plan JSON: expected an object with a resources list (as `seedance plan --json` writes)"
        )
    resources, seen = [], set()
    for index, entry in enumerate(document["resources"]):
        if not isinstance(entry, dict):
            raise PlanDocumentError(f"resources[{index}] is not an object")
        urn, kind = entry.get("urn"), entry.get("type")
        if not isinstance(urn, str) or not isinstance(kind, str):
            raise PlanDocumentError(f"resources[{index}]: urn and type must be strings")
        if urn in seen:
            raise PlanDocumentError(f"resource {urn} appears twice: URNs are unique in a plan")
        seen.add(urn)
        inputs = entry.get("inputs", {})
        if not isinstance(inputs, dict):
            raise PlanDocumentError(f"resource {urn}: inputs must be an object, not {type(inputs).__name__}")
        dependencies = entry.get("dependencies", [])
        name, parent, physical_id = entry.get("name", urn.rsplit("::", 1)[-1]), entry.get("parent"), entry.get("id")
        if not isinstance(dependencies, list) or not all(isinstance(d, str) for d in dependencies):
            raise PlanDocumentError(f"resource {urn}: dependencies must be a list of URNs")
        if not isinstance(name, str) or not all(v is None or isinstance(v, str) for v in (parent, physical_id)):
            raise PlanDocumentError(f"resource {urn}: name, parent and id must be strings")
        props = reveal_secrets(inputs)
        _check_quantities(props, "", urn)
        resources.append(PlanResource(urn, kind, name, props, parent, tuple(dependencies), physical_id))
    return resources
