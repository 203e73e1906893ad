"""Only the account and the administrators the stack config names administer the stack's keys: in a key
policy (a key's own, a replica's, a KeyPolicy resource), every Allow to anyone else (the account itself, its
root, hands the decision to IAM; the deployer, break-glass and platform administrators may hold it) gives
use actions only (encrypt, decrypt, re-encrypt, data keys, describe), and a grant only for an AWS resource
(`kms:GrantIsForAWSResource` true, as EBS and Auto Scaling use it). A role given `kms:*`, PutKeyPolicy or a
free CreateGrant can rewrite the key's policy or hand its use to anyone: every volume and model under it
goes with it."""

import functools

from components.plan.resources import KMS_KEY, KMS_KEY_POLICY, KMS_REPLICA_KEY
from components.plan.unknowns import of_types
from policies.framework import Rule
from policies.readers.iam import PolicyDocumentError, account_of, parse, wildcard_match
from policies.rules._helpers import home_accounts

USE_ACTIONS = (
    "kms:encrypt",
    "kms:decrypt",
    "kms:reencryptfrom",
    "kms:reencryptto",
    "kms:generatedatakey",
    "kms:generatedatakeywithoutplaintext",
    "kms:generatedatakeypair",
    "kms:generatedatakeypairwithoutplaintext",
    "kms:describekey",
)
# What else a key policy can give (the KMS API reference's actions on a key): administering it.
ADMIN_ACTIONS = (
    "kms:putkeypolicy",
    "kms:creategrant",
    "kms:retiregrant",
    "kms:revokegrant",
    "kms:listgrants",
    "kms:schedulekeydeletion",
    "kms:cancelkeydeletion",
    "kms:disablekey",
    "kms:enablekey",
    "kms:disablekeyrotation",
    "kms:enablekeyrotation",
    "kms:rotatekeyondemand",
    "kms:updatekeydescription",
    "kms:createalias",
    "kms:updatealias",
    "kms:deletealias",
    "kms:tagresource",
    "kms:untagresource",
    "kms:importkeymaterial",
    "kms:deleteimportedkeymaterial",
    "kms:replicatekey",
    "kms:updateprimaryregion",
    "kms:getkeypolicy",
)
GRANT = "kms:creategrant"
FOR_AWS_RESOURCE = "kms:grantisforawsresource"


def _for_aws_resources(statement) -> bool:
    return any(
        c.key == FOR_AWS_RESOURCE and c.operator == "bool" and not c.if_exists and c.values == ("true",)
        for c in statement.conditions
    )


def _account_itself(principal, accounts) -> bool:
    value = principal.value
    return principal.kind == "aws" and (
        value in accounts or (value.endswith(":root") and account_of(value) in accounts)
    )


@functools.lru_cache(maxsize=4096)
def _admin_named_by(pattern: str) -> frozenset[str]:
    return frozenset(action for action in ADMIN_ACTIONS if wildcard_match(pattern, action))


def _administering(statement):
    named = frozenset().union(*map(_admin_named_by, statement.actions))
    granted = [action for action in ADMIN_ACTIONS if (action in named) != statement.not_action]
    if GRANT in granted and _for_aws_resources(statement) and granted == [GRANT]:
        return []
    return granted


def check(resources, config):
    accounts = home_accounts(resources, config["home_accounts"])
    for resource in of_types(resources, KMS_KEY, KMS_REPLICA_KEY, KMS_KEY_POLICY):
        text = resource.props.get("policy")
        if not text:
            continue
        try:
            statements = parse(text)
        except PolicyDocumentError:
            continue  # aws-iam-policy-disallow-public-principal names a document AWS refuses
        for statement in statements:
            if not statement.allow or statement.principals is None:
                continue
            others = [
                p
                for p in statement.principals
                if not _account_itself(p, accounts) and p.value not in config["key_administrators"]
            ]
            granted = _administering(statement) if others or statement.not_principal else []
            if granted:
                who = ", ".join(p.value for p in others) or "everyone but the principals it names"
                yield (
                    resource.urn,
                    (
                        f"{resource.name}: statement {statement.sid} lets {who} {', '.join(granted[:3])}"
                        f"{' and more' if len(granted) > 3 else ''}: only the account administers the key"
                    ),
                )


RULE = Rule(
    name="aws-kms-key-restrict-key-policy",
    description="A key policy gives anyone but the account itself use actions only, and grants only for AWS resources.",
    severity="critical",
    remediation="Keep administration with the account root (IAM decides who administers); give roles and "
    "services encrypt, decrypt and data-key actions, and CreateGrant only with kms:GrantIsForAWSResource.",
    topics=("security", "iam"),
    config={
        "home_accounts": {"type": "array", "items": {"type": "string", "pattern": r"^\d{12}$"}, "default": []},
        # The roles the stack config names to administer the platform: the deployer, break-glass, admins.
        "key_administrators": {"type": "array", "items": {"type": "string"}, "default": []},
    },
    check_stack=check,
    standards=("AWS KMS Developer Guide: key policies (least privilege, separate key administrators)", "CIS EKS 5.3.1"),
)
