"""Hypothesis strategies for the equivalent spellings of a document: the same meaning, written every way
its API accepts. Each family's tests draw a violation or an allowed shape in a random spelling."""

from __future__ import annotations

import json

from hypothesis import strategies as st

from components.plan.resources import PlanResource

HOME = "123456789012"
OTHER = "999988887777"


def any_case(text: str) -> st.SearchStrategy[str]:
    """`text` with each letter in either case (what a case-insensitive reader must treat alike)."""
    return st.tuples(*[st.sampled_from(sorted({c.lower(), c.upper()})) for c in text]).map("".join)


def one_or_list(value) -> st.SearchStrategy:
    """A single value, or a list holding it (IAM, selectors and rules take either)."""
    return st.sampled_from([value, [value]])


def resource(type_: str, props: dict, name: str = "subject", id_: str | None = None) -> PlanResource:
    return PlanResource(
        urn=f"urn:pulumi:prod::seedance-gpu::{type_}::{name}", type=type_, name=name, props=props, id=id_
    )


@st.composite
def iam_document(draw, statement: dict, noise: bool = True) -> str | dict:
    """A policy document holding `statement` (and maybe harmless Deny statements), as text or an object."""
    statements = [statement]
    if noise and draw(st.booleans()):
        statements.insert(
            draw(st.integers(0, 1)),
            {
                "Sid": "DenyPlainHttp",
                "Effect": "Deny",
                "Principal": "*",
                "Action": "*",
                "Resource": "*",
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            },
        )
    body = statements[0] if len(statements) == 1 and draw(st.booleans()) else statements
    document = {"Version": "2012-10-17", "Statement": body}
    return json.dumps(document) if draw(st.booleans()) else document
