"""IAM documents judged by meaning: every generated spelling of an outside grant fails the rule, every
spelling of a home-only grant passes (aws-iam-policy-disallow-public-principal over policies/readers/iam.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.plan.resources import EKS_ACCESS_ENTRY, LAMBDA_PERMISSION
from policies.framework import run_rules
from policies.readers.iam import Home, outside_grants, parse
from policies.rules.aws_iam_policy_disallow_public_principal import RULE
from tests.policies.spellings import HOME, OTHER, any_case, iam_document, one_or_list, resource

RESOURCE_POLICIES = [
    ("aws:kms/key:Key", "policy"),
    ("aws:kms/keyPolicy:KeyPolicy", "policy"),
    ("aws:s3/bucketPolicy:BucketPolicy", "policy"),
    ("aws:sqs/queuePolicy:QueuePolicy", "policy"),
    ("aws:sns/topicPolicy:TopicPolicy", "policy"),
    ("aws:ecr/repositoryPolicy:RepositoryPolicy", "policy"),
    ("aws:secretsmanager/secretPolicy:SecretPolicy", "policy"),
]
ISSUER = "oidc.eks.us-east-1.amazonaws.com/id/D6DE3D052C46DCA983A4D49F00166093"
PROVIDER = f"arn:aws:iam::{HOME}:oidc-provider/{ISSUER}"
# The node role the plan creates and its access entry: how a plan says which account is home when no config
# names it.
EC2_TRUST = {
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}]
}
NODE_ROLE = resource("aws:iam/role:Role", {"name": "nodes", "assumeRolePolicy": EC2_TRUST}, name="nodes")
NODE_ENTRY = resource(
    EKS_ACCESS_ENTRY, {"type": "EC2_LINUX", "principalArn": f"arn:aws:iam::{HOME}:role/nodes"}, name="nodes"
)


def findings(resources):
    return run_rules([RULE], [*resources, NODE_ROLE, NODE_ENTRY], {RULE.name: "mandatory"})


everyone = st.sampled_from(["*", ["*"], {"AWS": "*"}, {"AWS": ["*"]}, {"AWS": ["*", f"arn:aws:iam::{HOME}:root"]}])
other_account = st.sampled_from(
    [OTHER, f"arn:aws:iam::{OTHER}:root", f"arn:aws:iam::{OTHER}:role/x", f"arn:aws:sts::{OTHER}:assumed-role/x/y"]
)
home_account = st.sampled_from([HOME, f"arn:aws:iam::{HOME}:root", f"arn:aws:iam::{HOME}:role/platform"])


@st.composite
def condition(draw, operator: str, key: str, values) -> dict:
    return {draw(any_case(operator)): {draw(any_case(key)): draw(one_or_list(values))}}


@st.composite
def not_narrowing(draw) -> dict | None:
    """Conditions on `*` that let outside callers in: naming someone else, absent-key-tolerant, negated,
    a wildcard or a policy variable."""
    return draw(
        st.one_of(
            st.none(),
            condition("StringEquals", "aws:PrincipalAccount", OTHER),
            condition("StringEquals", "aws:PrincipalOrgID", "o-stranger"),
            condition("StringEquals", "aws:SourceVpce", "vpce-0outside"),
            condition("StringEquals", "aws:PrincipalAccount", "${aws:PrincipalAccount}"),
            condition("StringEqualsIfExists", "aws:PrincipalAccount", HOME),
            condition("ForAllValues:StringEquals", "aws:PrincipalAccount", HOME),
            condition("StringNotEquals", "aws:PrincipalAccount", HOME),
            condition("StringLike", "aws:PrincipalAccount", "*"),
            condition("ArnLike", "aws:PrincipalArn", "arn:aws:iam::*:role/x"),
            condition("Bool", "aws:SecureTransport", "true"),
            condition("StringEquals", "aws:ResourceAccount", HOME),  # always true of a resource's own policy
        )
    )


@st.composite
def narrowing(draw) -> dict:
    return draw(
        st.one_of(
            condition("StringEquals", "aws:PrincipalAccount", HOME),
            condition("StringEquals", "aws:SourceAccount", HOME),
            condition("ForAnyValue:StringEquals", "aws:PrincipalAccount", HOME),
            condition("ArnLike", "aws:SourceArn", f"arn:aws:events:us-east-1:{HOME}:rule/*"),
            condition("StringEquals", "kms:CallerAccount", HOME),
        )
    )


@st.composite
def outside_statement(draw) -> dict:
    kind = draw(st.sampled_from(["everyone", "account", "not-principal", "service"]))
    statement = {
        "Effect": draw(st.sampled_from(["Allow", "allow"])),
        "Action": draw(one_or_list("s3:GetObject")),
        "Resource": "*",
    }
    if kind == "everyone":
        statement["Principal"] = draw(everyone)
        found = draw(not_narrowing())
        if found:
            statement["Condition"] = found
    elif kind == "account":
        statement["Principal"] = {"AWS": draw(one_or_list(draw(other_account)))}
    elif kind == "not-principal":
        statement["NotPrincipal"] = {"AWS": f"arn:aws:iam::{HOME}:root"}
    else:
        statement["Principal"] = {"Service": draw(one_or_list("events.amazonaws.com"))}
    return statement


@st.composite
def home_statement(draw) -> dict:
    statement = {"Effect": "Allow", "Action": draw(one_or_list("kms:Decrypt")), "Resource": "*"}
    if draw(st.booleans()):
        statement["Principal"] = {"AWS": draw(one_or_list(draw(home_account)))}
    else:
        statement["Principal"] = draw(st.one_of(everyone, st.just({"Service": "events.amazonaws.com"})))
        statement["Condition"] = draw(narrowing())
    if draw(st.booleans()):
        statement["Sid"] = "Home"
    return statement


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(RESOURCE_POLICIES), st.data())
def test_every_spelling_of_an_outside_grant_fails(policy_type, data):
    type_, key = policy_type
    document = data.draw(iam_document(data.draw(outside_statement())))
    assert findings([resource(type_, {key: document})]), document


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(RESOURCE_POLICIES), st.data())
def test_every_spelling_of_a_home_grant_passes(policy_type, data):
    type_, key = policy_type
    document = data.draw(iam_document(data.draw(home_statement())))
    assert findings([resource(type_, {key: document})]) == [], document


@st.composite
def oidc_trust(draw, sub: bool, aud: bool, exact_sub: bool = True, provider: str = PROVIDER) -> dict:
    tests = {}
    if sub:
        tests[f"{ISSUER}:sub"] = "system:serviceaccount:kube-system:cluster-autoscaler"
    if aud:
        tests[f"{ISSUER}:aud"] = draw(one_or_list("sts.amazonaws.com"))
    operator = draw(st.sampled_from(["StringEquals", "stringequals"]))
    condition = {operator: tests} if tests else {}
    if not exact_sub:
        condition["StringLike"] = {f"{ISSUER}:sub": draw(st.sampled_from(["system:serviceaccount:*:*", "*"]))}
    statement = {"Effect": "Allow", "Principal": {"Federated": provider}, "Action": "sts:AssumeRoleWithWebIdentity"}
    if condition:
        statement["Condition"] = condition
    return statement


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_oidc_trust_without_an_exact_sub_and_aud_fails_and_with_them_passes(data):
    bad = data.draw(
        st.one_of(
            oidc_trust(sub=False, aud=True),
            oidc_trust(sub=True, aud=False),
            oidc_trust(sub=False, aud=True, exact_sub=False),
            oidc_trust(sub=True, aud=True, provider=PROVIDER.replace(HOME, OTHER)),
        )
    )
    role = "aws:iam/role:Role"
    assert findings([resource(role, {"assumeRolePolicy": data.draw(iam_document(bad))})]), bad
    good = data.draw(oidc_trust(sub=True, aud=True))
    assert findings([resource(role, {"assumeRolePolicy": data.draw(iam_document(good))})]) == []


def test_a_trust_in_another_accounts_root_fails_and_a_named_role_of_it_passes_when_the_config_names_it():
    trust = {
        "Statement": [
            {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{OTHER}:role/ci"}, "Action": "sts:AssumeRole"}
        ]
    }
    role = resource("aws:iam/role:Role", {"assumeRolePolicy": trust})
    assert findings([role])
    named = {RULE.name: {"enforcementLevel": "mandatory", "home_principals": [f"arn:aws:iam::{OTHER}:role/ci"]}}
    assert run_rules([RULE], [role, NODE_ROLE, NODE_ENTRY], named) == []


@given(
    st.sampled_from(
        [
            ({"principal": "*"}, True),
            ({"principal": OTHER}, True),
            ({"principal": "sns.amazonaws.com"}, True),
            ({"principal": "sns.amazonaws.com", "sourceArn": f"arn:aws:sns:us-east-1:{HOME}:topic"}, False),
            ({"principal": "events.amazonaws.com", "sourceAccount": HOME}, False),
            ({"principal": HOME}, False),
        ]
    )
)
def test_a_lambda_permission_reads_as_the_statement_lambda_adds(case):
    props, outside = case
    found = findings([resource(LAMBDA_PERMISSION, {"action": "lambda:InvokeFunction", "function": "f", **props})])
    assert bool(found) is outside


def test_a_document_aws_refuses_is_a_finding_and_an_organisation_guardrail_closes_every_grant():
    assert findings([resource("aws:sqs/queuePolicy:QueuePolicy", {"policy": "{not json"})])
    statements = parse(
        {
            "Statement": [
                {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "*"},
                {
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "*",
                    "Resource": "*",
                    "Condition": {"StringNotEquals": {"aws:PrincipalOrgID": "o-home"}},
                },
            ]
        }
    )
    assert outside_grants(statements, Home(accounts=frozenset({HOME}), organisations=frozenset({"o-home"}))) == []
    assert outside_grants(statements, Home(accounts=frozenset({HOME}))) != []


@given(st.data())
@settings(max_examples=60, deadline=None)
def test_a_guardrail_deny_narrowed_by_any_other_condition_closes_nothing(data):
    """IAM ANDs a statement's conditions: a Deny of outsiders that also needs `aws:SecureTransport false` (or
    a region, or a time) denies only outsiders it also holds for, so the open Allow beside it stands."""
    guard = data.draw(condition("StringNotEquals", "aws:PrincipalAccount", HOME))
    narrower = data.draw(
        st.sampled_from(
            [
                {"Bool": {"aws:SecureTransport": "false"}},
                {"StringEquals": {"aws:RequestedRegion": "eu-west-1"}},
                {"DateGreaterThan": {"aws:CurrentTime": "2030-01-01T00:00:00Z"}},
            ]
        )
    )
    deny = {"Effect": "Deny", "Principal": "*", "Action": "*", "Resource": "*", "Condition": {**guard, **narrower}}
    allow = {"Effect": "Allow", "Principal": "*", "Action": "kms:Decrypt", "Resource": "*"}
    home = Home(accounts=frozenset({HOME}))
    assert outside_grants(parse({"Statement": [allow, deny]}), home) != []
    assert outside_grants(parse({"Statement": [allow, {**deny, "Condition": guard}]}), home) == []


def test_an_endpoint_lets_outside_credentials_read_but_not_write_out():
    def endpoint(action, condition=None):
        statement = {"Effect": "Allow", "Principal": "*", "Action": action, "Resource": "*"}
        if condition:
            statement["Condition"] = condition
        return resource("aws:ec2/vpcEndpoint:VpcEndpoint", {"policy": {"Statement": [statement]}})

    assert findings([endpoint("s3:GetObject")]) == []
    assert findings([endpoint("s3:PutObject")])
    assert findings([endpoint("s3:PutObject", {"StringEquals": {"aws:ResourceAccount": HOME}})]) == []
    assert findings([endpoint("*", {"StringEquals": {"aws:ResourceAccount": OTHER}})])


def test_two_statements_sharing_a_sid_are_each_judged_as_themselves():
    """A grant carries its own statement: a read-only statement named like a writing one does not hide it."""
    statements = [
        {"Sid": "S", "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "*"},
        {"Sid": "S", "Effect": "Allow", "Principal": "*", "Action": "s3:PutObject", "Resource": "*"},
    ]
    endpoint = resource("aws:ec2/vpcEndpoint:VpcEndpoint", {"policy": {"Statement": statements}})
    (finding,) = findings([endpoint])
    assert "s3:putobject" in finding.message


def test_a_document_without_statements_has_none():
    """No Statement (or a null one) grants nothing; it is not a malformed statement."""
    from policies.readers.iam import parse

    assert parse({"Version": "2012-10-17"}) == [] and parse('{"Statement": null}') == []


def test_text_that_is_not_json_is_refused_saying_so():

    from policies.readers.iam import PolicyDocumentError, parse

    with pytest.raises(PolicyDocumentError, match=r"^not JSON: "):
        parse('{"Statement": [')


@pytest.mark.parametrize(
    "key, value",
    [("aws:SourceVpce", "vpce-0a1b2c3d"), ("aws:SourceVpc", "vpc-0a1b2c3d"), ("aws:SourceIp", "10.0.0.0/8")],
)
def test_a_network_origin_never_ties_a_statement_to_home(key, value):
    """Even the plan's own endpoint or VPC: it says where a request comes from, not who makes it (any pod,
    anonymous or of any account, through it)."""
    from policies.readers.iam import Home, narrows_to_home, statement_of

    statement = statement_of(
        {
            "Effect": "Allow",
            "Principal": "*",
            "Action": "s3:GetObject",
            "Resource": "*",
            "Condition": {"StringEquals": {key: value}},
        }
    )
    home = Home(accounts=frozenset({HOME}))
    assert not any(narrows_to_home(c, home) for c in statement.conditions)
    assert outside_grants([statement], home)


def test_every_spelling_of_anyone_reads_as_the_one_public_principal():
    """ "*", ["*"] and {"AWS": "*"} (alone or in a list) are all anyone; a bare ARN, which AWS's grammar
    refuses outside a map, is still read as the AWS principal it names."""
    from policies.readers.iam import Principal, statement_of

    def principals(value):
        return statement_of(
            {"Effect": "Allow", "Principal": value, "Action": "s3:GetObject", "Resource": "*"}, 0
        ).principals

    anyone = (Principal("*", "*"),)
    assert principals("*") == principals(["*"]) == principals({"AWS": "*"}) == principals({"aws": ["*"]}) == anyone
    assert principals({"AWS": [f"arn:aws:iam::{HOME}:root", "*"]}) == (
        Principal("aws", f"arn:aws:iam::{HOME}:root"),
        *anyone,
    )
    assert principals(f"arn:aws:iam::{OTHER}:root") == (Principal("aws", f"arn:aws:iam::{OTHER}:root"),)


def test_a_statement_is_read_the_same_whatever_the_case_of_its_element_names():
    """IAM refuses element names in other cases, but a later parser may not: the gate reads them as IAM's."""
    from policies.readers.iam import statement_of

    canonical = {
        "Sid": "S",
        "Effect": "Allow",
        "Principal": "*",
        "Action": "s3:GetObject",
        "Resource": "*",
        "Condition": {"StringEquals": {"aws:PrincipalAccount": HOME}},
    }
    respelled = {
        "sid": "S",
        "EFFECT": "Allow",
        "principal": "*",
        "aCtIoN": "s3:GetObject",
        "Resource": "*",
        "condition": {"StringEquals": {"aws:PrincipalAccount": HOME}},
    }
    assert statement_of(respelled) == statement_of(canonical)


def test_only_an_account_id_or_an_arns_account_field_is_an_account():
    from policies.readers.iam import account_of

    assert account_of(HOME) == account_of(f"arn:aws:iam::{HOME}:role/x") == HOME
    # A principal's unique id (what IAM shows for a deleted role) and other short strings name no account.
    for principal in ("AROADBQP57FF2AEXAMPLE", "arn:aws:iam", f"urn:aws:iam::{HOME}:root", ""):
        assert account_of(principal) is None, principal


def test_a_deny_of_one_principal_is_no_guardrail():
    """Only a Deny of everyone (Principal *) outside home closes the other statements: one naming a single role
    leaves the open Allow beside it open."""
    allow = {"Effect": "Allow", "Principal": "*", "Action": "kms:Decrypt", "Resource": "*"}
    deny = {
        "Effect": "Deny",
        "Principal": {"AWS": f"arn:aws:iam::{HOME}:role/x"},
        "Action": "*",
        "Resource": "*",
        "Condition": {"StringNotEquals": {"aws:PrincipalAccount": HOME}},
    }
    home = Home(accounts=frozenset({HOME}))
    assert outside_grants(parse({"Statement": [allow, deny]}), home) != []
    assert outside_grants(parse({"Statement": [allow, {**deny, "Principal": "*"}]}), home) == []


def test_an_organisation_path_names_home_by_its_first_part_and_a_star_of_any_kind_is_anyone():
    home = Home(accounts=frozenset({HOME}), organisations=frozenset({"o-home"}))

    def under(path):
        return parse(
            {
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": "*",
                        "Action": "kms:Decrypt",
                        "Resource": "*",
                        "Condition": {"ForAnyValue:StringLike": {"aws:PrincipalOrgPaths": path}},
                    }
                ]
            }
        )

    assert outside_grants(under("o-home/r-ab12/ou-ab12-11111111/*"), home) == []
    assert outside_grants(under("o-other/r-ab12/*"), home) != []
    for kind in ("Service", "Federated", "CanonicalUser"):
        statements = parse(
            {"Statement": [{"Effect": "Allow", "Principal": {kind: "*"}, "Action": "kms:Decrypt", "Resource": "*"}]}
        )
        assert [grant.who for grant in outside_grants(statements, home)] == ["anyone (Principal *)"]
