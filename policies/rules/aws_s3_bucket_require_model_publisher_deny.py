"""Only a serving set's publisher role writes its models, its operator role only their switch, and only the
administrators change the model bucket: its policy denies every write that changes what a server loads (the
platform's own list: `components/serving/publishing.py: WRITE_ACTIONS`, replication into the bucket
included) on every served file under each prefix (any model directory, any depth, in any letter case S3
keys can take) to every principal but that set's publisher roles, each model's config and history (the
switch) to every principal but those and its operator roles, every other file to the operator roles by
name, and every change of the bucket's settings (policy, versioning,
lifecycle, replication, encryption, ...) to every principal but the administrators the config names. Judged
by meaning, action by action and key by key, across statements: a Deny narrowed by a resource pattern or a
case, an action left out, an exception added (another principal, a pattern, a second condition, IfExists)
leaves a way to write. Without it, anyone with s3:PutObject on the bucket (a team's people, a node) puts
code into Triton."""

from components.plan.resources import S3_BUCKET_POLICY as BUCKET_POLICY
from components.plan.resources import S3_BUCKETS
from components.plan.unknowns import of_types
from components.serving.publishing import BUCKET_SETTINGS_ACTIONS, WRITE_ACTIONS, switch_patterns
from policies.framework import Rule
from policies.readers.iam import (
    PolicyDocumentError,
    names_action,
    parse,
    resource_match,
    undenied,
)
from seedance_client.publishing import SWITCH_FILES

# Served files (Triton loads directories: `<prefix>/<model>/...`), named as no stack names them: the switch
# (each model's config and history), and files that are code or data the servers load.
SWITCH_KEYS = tuple(f"m/{name}" for name in SWITCH_FILES)
SERVED_KEYS = ("m/1/model.plan", "Model-Ω/2/weights/part-0.bin", "m/.hidden", "M/labels.txt")
# The conditions that name whom a Deny is for (an operator role: the Deny keeps it to the switch).
_NAMING = frozenset({"arnequals", "arnlike", "stringequals", "stringlike"})


def _role_arn(arn: str, account: str) -> str | None:
    """The role name of a role ARN of the bucket's own account, spelled as IAM gives a principal's
    (`arn:aws:iam::<account>:role/<name>`: no region), else None: a namesake in another account, or an ARN
    that matches no principal, is no role of the stack's."""
    head, _, name = arn.partition(":role/")
    return name if name and head == f"arn:aws:iam::{account}" else None


def _publishers(names, account):
    """Exempted ARNs that are all roles of these names in the bucket's account."""
    return lambda exempted: all(_role_arn(arn, account) in names for arn in exempted)


def _administrators(config, account):
    """Exempted ARNs that are the named administrators; where the config names no deployer, and one role
    more of the account (the deploying session's, unknown to the gate)."""
    named = set(config["administrators"])

    def exempt(exempted: frozenset[str]) -> bool:
        others = exempted - named
        return not others or (
            not config["deployer_named"] and len(others) == 1 and _role_arn(next(iter(others)), account) is not None
        )

    return exempt


def _covers(pattern: str, served: str) -> bool:
    """Whether a resource pattern covers every served file under `served` by its shape: `*`, a spelled-out
    prefix of the served prefix followed by one `*`, or the platform's own `<prefix>/*/*`. A pattern of
    another shape may match the probed files and miss others (`*/*.*`, the probes' own names)."""
    literal, _, rest = pattern.partition("*")
    return pattern == f"{served}*/*" or (rest == "" and served.startswith(literal) and not set(literal) & set("?$"))


def _covering(statements, served: str):
    """The statements with only the resource patterns that cover every served file by their shape; a Deny by
    NotResource is left out (what it leaves out is not judged here)."""
    return [
        s if s.allow else s._replace(resources=tuple(p for p in s.resources if _covers(p, served)))
        for s in statements
        if s.allow or not s.not_resource
    ]


def _denied_to(statements, role: str, account: str, files, served: str, switches: frozenset[str]):
    """The (action, file) pairs no Deny takes from the role by name: a Deny for every principal with one
    condition (IAM ANDs conditions: a second could never hold with it), an `aws:PrincipalArn` test listing the
    role's exact ARN, over the files by a Resource that covers them by its shape or by a NotResource of
    nothing but the switch's own patterns (a wider NotResource could leave a model file out)."""
    arn = f"arn:aws:iam::{account}:role/{role}"
    reached: dict[str, set[str]] = {}
    for statement in statements:
        if statement.allow or statement.not_principal or not any(p.kind == "*" for p in statement.principals or ()):
            continue
        (condition, *more) = statement.conditions or (None,)
        named = (
            condition is not None
            and not more
            and condition.key == "aws:principalarn"
            and condition.operator in _NAMING
            and not condition.if_exists
            and condition.qualifier is None
            and arn in condition.values
        )
        if not named or (statement.not_resource and not set(statement.resources) <= switches):
            continue
        patterns = (
            statement.resources if statement.not_resource else [p for p in statement.resources if _covers(p, served)]
        )
        covered = {f for f in files if any(resource_match(p, f) for p in patterns) != statement.not_resource}
        for action in WRITE_ACTIONS:
            if names_action(statement, action):
                reached.setdefault(action, set()).update(covered)
    return [(action, f) for action in WRITE_ACTIONS for f in files if f not in reached.get(action, ())]


def _gaps(statements, bucket: str, config):
    arn = f"arn:aws:s3:::{bucket}"
    account = bucket[len(config["bucket_prefix"]) :]  # the model bucket is named after its account
    switches = frozenset(p for entry in config["prefixes"] for p in switch_patterns(arn, entry["prefix"]))
    for entry in config["prefixes"]:
        publishers, operators = set(entry["publisher_roles"]), set(entry.get("operator_roles", []))
        guards = _covering(statements, f"{arn}/{entry['prefix']}/")
        whom = f"its publishers ({', '.join(sorted(publishers))})" + (
            f" and operators ({', '.join(sorted(operators))})" if operators else ""
        )
        for keys in (SWITCH_KEYS, SERVED_KEYS):
            files = {f"{arn}/{entry['prefix']}/{key}": key for key in keys}
            open_writes = undenied(guards, WRITE_ACTIONS, files, _publishers(publishers | operators, account))
            if open_writes:
                action, key = open_writes[0][0], files[open_writes[0][1]]
                yield (
                    f"does not deny {action} on {entry['prefix']}/{key} (and {len(open_writes) - 1} more action "
                    f"and file pairs) to everyone but {whom}"
                )
        files = {f"{arn}/{entry['prefix']}/{key}": key for key in SERVED_KEYS}
        # Kept from the operator: by a Deny of everyone but the publishers, or one that names the operator.
        unexempted = set(undenied(guards, WRITE_ACTIONS, files, _publishers(publishers, account)))
        served = f"{arn}/{entry['prefix']}/"
        for role in sorted(operators):
            open_writes = [
                pair for pair in _denied_to(statements, role, account, files, served, switches) if pair in unexempted
            ]
            if open_writes:
                action, key = open_writes[0][0], files[open_writes[0][1]]
                yield (
                    f"does not deny {action} on {entry['prefix']}/{key} (and {len(open_writes) - 1} more) to its "
                    f"operator role {role}, which may write the switch only (each model's config and history)"
                )
    if config["prefixes"]:
        administrators = _administrators(config, account)
        open_settings = [a for a, _ in undenied(statements, BUCKET_SETTINGS_ACTIONS, [arn], administrators)]
        if open_settings:
            yield f"does not deny {', '.join(open_settings)} on the bucket to everyone but its administrators"


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
    for bucket in of_types(resources, *S3_BUCKETS):
        if str(bucket.props.get("bucket")).startswith(config["bucket_prefix"]) and bucket.props.get("policy"):
            yield (
                bucket.urn,
                (
                    f"{bucket.name}: sets the model bucket's policy inline beside its BucketPolicy: two writers of one "
                    "policy, and the last to apply wins"
                ),
            )
    for policy in policies:
        try:
            statements = parse(policy.props.get("policy"))
        except PolicyDocumentError as error:
            yield policy.urn, f"{policy.name}: not a policy document ({error})"
            continue
        for gap in _gaps(statements, str(policy.props.get("bucket")), config):
            yield policy.urn, f"{policy.name}: {gap}"


RULE = Rule(
    name="aws-s3-bucket-require-model-publisher-deny",
    description="The model bucket's policy denies writes of served files to everyone but that set's publisher "
    "roles, and changes of the bucket to everyone but its administrators.",
    severity="critical",
    remediation="Keep the model repository's OnlyPublishersWrite, OperatorsOnlySwitch and "
    "OnlyAdministratorsChangeTheBucket statements (components/serving/model_repository.py).",
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
                    "publisher_roles": {"type": "array", "items": {"type": "string"}},  # role names
                    "operator_roles": {"type": "array", "items": {"type": "string"}},  # role names
                },
            },
        },
        # Role ARNs that may change the bucket: the deployer (when named) and break-glass.
        "administrators": {"type": "array", "items": {"type": "string"}, "default": []},
        "deployer_named": {"type": "boolean", "default": False},
    },
    check_stack=check,
    standards=("EKS BPG: Multi-tenancy - isolate what tenants run", "S3 User Guide: bucket policies that deny writes"),
)
