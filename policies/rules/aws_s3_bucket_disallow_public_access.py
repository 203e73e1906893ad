"""Every bucket blocks public access with all four switches, and no ACL makes a bucket or object public.
Account-level blocks are the account's; a bucket the plan creates carries its own. ACLs stay off (S3's
default object ownership since 2023, BucketOwnerEnforced): ownership controls that turn them back on let an
ACL grant another account (a canonical user) in, which no public access switch stops."""

from components.plan.resources import (
    S3_ACL_HOLDERS as ACL_HOLDERS,
)
from components.plan.resources import (
    S3_BUCKETS as BUCKETS,
)
from components.plan.resources import (
    S3_OWNERSHIP_CONTROLS as OWNERSHIP,
)
from components.plan.resources import (
    S3_PUBLIC_ACCESS_BLOCK as BLOCK,
)
from components.plan.resources import (
    listed,
)
from components.plan.unknowns import of_types
from policies.framework import Rule
from policies.rules._helpers import bucket_name

SWITCHES = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
PUBLIC_ACLS = {"public-read", "public-read-write", "authenticated-read"}


def check(resources, config):
    blocked = {
        bucket_name(r) for r in of_types(resources, BLOCK) if all(r.props.get(switch) is True for switch in SWITCHES)
    }
    for resource in of_types(resources, *BUCKETS, *ACL_HOLDERS):
        if resource.type in BUCKETS and bucket_name(resource) not in blocked:
            yield (
                resource.urn,
                (f"{resource.name}: no public access block with all four switches on ({', '.join(SWITCHES)})"),
            )
        if resource.type in ACL_HOLDERS and resource.props.get("acl") in PUBLIC_ACLS:
            yield resource.urn, f"{resource.name}: ACL {resource.props.get('acl')} makes it public"
    for resource in of_types(resources, OWNERSHIP):
        owned = [rule.get("objectOwnership") for rule in listed(resource.props.get("rule")) if isinstance(rule, dict)]
        if owned != ["BucketOwnerEnforced"]:
            yield (
                resource.urn,
                (
                    f"{resource.name}: object ownership {', '.join(map(str, owned)) or 'unset'} turns ACLs "
                    "back on: a grant to another account lets it in past the bucket policy and the "
                    "public access block"
                ),
            )


RULE = Rule(
    name="aws-s3-bucket-disallow-public-access",
    description="Buckets carry a public access block with all four switches on; no public ACLs.",
    severity="critical",
    remediation="Add aws.s3.BucketPublicAccessBlock(bucket=..., all four True) and drop public ACLs.",
    topics=("security", "storage"),
    check_stack=check,
    standards=("EKS BPG: Data encryption and secrets management - private data stores",),
)
