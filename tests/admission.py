"""ValidatingAdmissionPolicies of a plan evaluated by a CEL engine (cel-python), as the API server
evaluates them: match conditions first, then the variables in order, then each validation."""

from __future__ import annotations

import celpy
from celpy import json_to_cel

_ENV = celpy.Environment()


def _evaluate(expression: str, activation: dict):
    return _ENV.program(_ENV.compile(expression)).evaluate(activation)


def denials(
    policy_spec: dict, request: dict, obj: dict, old: dict | None = None, namespace_object: dict | None = None
) -> list[str] | None:
    """The messages of the validations that fail; None when the policy does not apply (a match
    condition is false). `namespace_object`: the object's namespace, as the API server passes it."""
    activation = {
        "request": json_to_cel(request),
        "object": json_to_cel(obj),
        "oldObject": json_to_cel(old) if old is not None else json_to_cel(None),
        "namespaceObject": json_to_cel(namespace_object),
    }
    if not all(bool(_evaluate(c["expression"], activation)) for c in policy_spec.get("matchConditions", [])):
        return None
    variables: dict = {}
    for variable in policy_spec.get("variables", []):
        activation["variables"] = json_to_cel(variables)
        variables[variable["name"]] = _evaluate(variable["expression"], activation)
    activation["variables"] = celpy.celtypes.MapType({celpy.celtypes.StringType(k): v for k, v in variables.items()})
    return [v["message"] for v in policy_spec["validations"] if not bool(_evaluate(v["expression"], activation))]
