"""Only a serving set's publisher role writes its models: the model bucket's policy denies every write
action under each served prefix to every principal but that set's publisher roles. Without the Deny,
anyone with s3:PutObject on the bucket (a team's people, a node) puts code into Triton."""

import fnmatch

from components.plan.resources import S3_BUCKET_POLICY as BUCKET_POLICY
from components.plan.unknowns import of_types
from policies.framework import Rule
from policies.readers.iam import ACCOUNT_ID, PolicyDocumentError, parse

WRITES = ("s3:putobject", "s3:deleteobject")


def _covers(patterns, value: str) -> bool:
    return any(fnmatch.fnmatchcase(value, p.lower()) for p in patterns)


def _publisher(arn: str, names: set[str]) -> bool:
    """A role ARN of one of the publisher roles, by its exact name, in a named account."""
    head, _, name = arn.partition(":role/")
    parts = head.split(":")
    return (
        name in names
        and len(parts) == 5
        and parts[:3] == ["arn", "aws", "iam"]
        and bool(ACCOUNT_ID.fullmatch(parts[4]))
    )


def denies_writes_but_publishers(statements, bucket: str, prefix: str, publishers: set[str]) -> bool:
    target = f"arn:aws:s3:::{bucket}/{prefix}/1/model.plan".lower()
    for statement in statements:
        if statement.allow or statement.not_action or statement.not_resource:
            continue
        if statement.principals is None or not any(p.kind == "*" for p in statement.principals):
            continue
        if not all(_covers(statement.actions, action) for action in WRITES):
            continue
        if not _covers([r.lower() for r in statement.resources], target):
            continue
        exceptions = [c for c in statement.conditions if c.key == "aws:principalarn"]
        if (
            len(statement.conditions) == len(exceptions) == 1
            and exceptions[0].negated
            and not exceptions[0].if_exists
            and all(_publisher(v, publishers) for v in exceptions[0].values)
        ):
            return True
    return False


def check(resources, config):
    if not config["prefixes"]:
        return
    policies = [
        r for r in of_types(resources, BUCKET_POLICY) if str(r.props.get("bucket")).startswith(config["bucket_prefix"])
    ]
    if not policies:
        yield (
            None,
            f"no policy on the model bucket ({config['bucket_prefix']}<account>): anyone who may write it publishes",
        )
        return
    for policy in policies:
        bucket = str(policy.props.get("bucket"))
        try:
            statements = parse(policy.props.get("policy"))
        except PolicyDocumentError as error:
            yield policy.urn, f"{policy.name}: not a policy document ({error})"
            continue
        for entry in config["prefixes"]:
            publishers = {arn for arn in entry["publisher_roles"]}
            if not denies_writes_but_publishers(statements, bucket, entry["prefix"], publishers):
                yield (
                    policy.urn,
                    (
                        f"{policy.name}: does not deny writes under {entry['prefix']}/ to everyone but "
                        f"its publishers ({', '.join(sorted(publishers))})"
                    ),
                )


RULE = Rule(
    name="aws-s3-bucket-require-model-publisher-deny",
    description="The model bucket's policy denies writes under each served prefix to everyone but that set's "
    "publisher roles.",
    severity="critical",
    remediation="Keep the model repository's OnlyPublishersWrite statements (components/serving/model_repository.py).",
    topics=("security", "serving", "iam"),
    config={
        "bucket_prefix": {"type": "string", "default": ""},
        "prefixes": {
            "type": "array",
            "default": [],
            "items": {
                "type": "object",
                "required": ["prefix", "publisher_roles"],
                "properties": {
                    "prefix": {"type": "string"},
                    "publisher_roles": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    },  # role names
    check_stack=check,
    standards=("EKS BPG: Multi-tenancy - isolate what tenants run", "S3 User Guide: bucket policies that deny writes"),
)
