"""Replication keeps data in the stack's own buckets and out of what Triton serves: every replication rule
(a BucketReplicationConfig, or a bucket's inline configuration) copies into a bucket this plan makes, in
the stack's accounts, and never into the model bucket (a replica lands under its source's key, so a
served prefix would be written by the replication role, not by its publisher). A destination the plan
does not make is another account's bucket, or one the gate cannot judge: the objects leave the stack."""

from components.plan.resources import S3_BUCKETS, listed
from components.plan.resources import S3_REPLICATION_CONFIG as REPLICATION_CONFIG
from components.plan.unknowns import of_types
from policies.framework import Rule
from policies.rules._helpers import home_accounts


def _destinations(resource):
    """(source bucket, destination bucket ARN, destination account) of each of its replication rules."""
    if resource.type == REPLICATION_CONFIG:
        source, configurations = resource.props.get("bucket"), [resource.props]
    else:
        source = resource.props.get("bucket") or resource.id or resource.name
        configurations = listed(resource.props.get("replicationConfiguration") or []) + listed(
            resource.props.get("replicationConfigurations") or []
        )
    for configuration in configurations:
        for rule in listed((configuration or {}).get("rules") or []):
            for destination in listed((rule or {}).get("destination") or []):
                destination = destination or {}
                yield str(source), str(destination.get("bucket")), destination.get("account")


def check(resources, config):
    buckets = {str(n) for r in of_types(resources, *S3_BUCKETS) for n in (r.props.get("bucket"), r.id) if n}
    accounts = home_accounts(resources, config["home_accounts"])
    for resource in of_types(resources, REPLICATION_CONFIG, *S3_BUCKETS):
        for source, arn, account in _destinations(resource):
            name = arn.removeprefix("arn:aws:s3:::").split("/", 1)[0] if arn.startswith("arn:") else arn
            where = f"{resource.name}: replicates {source} into {arn}"
            if config["model_bucket_prefix"] and name.startswith(config["model_bucket_prefix"]):
                yield resource.urn, f"{where}, the model bucket: replicas would be served without their publisher"
            elif name not in buckets:
                yield resource.urn, f"{where}, a bucket the plan does not make: the objects leave the stack"
            elif account is not None and accounts and str(account) not in accounts:
                yield resource.urn, f"{where} of account {account}, outside the stack's accounts"


RULE = Rule(
    name="aws-s3-bucket-restrict-replication",
    description="Replication copies only into buckets the plan makes in the stack's accounts, never into the "
    "model bucket.",
    severity="critical",
    remediation="Replicate into a bucket the stack declares (a backup bucket of its own), never into the model "
    "bucket; publish models with `seedance-client publish`.",
    topics=("security", "iam"),
    config={
        "model_bucket_prefix": {"type": "string", "default": ""},
        "home_accounts": {"type": "array", "items": {"type": "string", "pattern": r"^\d{12}$"}, "default": []},
    },
    check_stack=check,
    standards=("EKS BPG: Data encryption and secrets management - private data stores", "S3 User Guide: replication"),
)
