"""Only a serving set's publisher role writes its models, and only the administrators change the model
bucket: its policy denies every write that changes what a server loads (the platform's own list:
`components/serving/publishing.py: WRITE_ACTIONS`, replication into the bucket included) on every served
file under each prefix (any model directory, any depth, in any letter case S3 keys can take) to every
principal but that set's publisher roles, and every change of the bucket's settings (policy, versioning,
lifecycle, replication, encryption, ...) to every principal but the administrators the config names. Judged
by meaning, action by action and key by key, across statements: a Deny narrowed by a resource pattern or a
case, an action left out, an exception added (another principal, a pattern, a second condition, IfExists)
leaves a way to write. Without it, anyone with s3:PutObject on the bucket (a team's people, a node) puts
code into Triton."""

from components.plan.resources import S3_BUCKET_POLICY as BUCKET_POLICY
from components.plan.resources import S3_BUCKETS
from components.plan.unknowns import of_types
from components.serving.publishing import BUCKET_SETTINGS_ACTIONS, WRITE_ACTIONS
from policies.framework import Rule
from policies.readers.iam import ACCOUNT_ID, PolicyDocumentError, parse, undenied

# Served files (Triton loads directories: `<prefix>/<model>/...`), named as no stack names them.
SERVED_KEYS = ("m/config.pbtxt", "m/1/model.plan", "Model-Ω/2/weights/part-0.bin", "m/.hidden")


def _role_arn(arn: str) -> str | None:
    """The role name of a role ARN in an account (`arn:aws:iam::<account>:role/<name>`), else None."""
    head, _, name = arn.partition(":role/")
    parts = head.split(":")
    valid = len(parts) == 5 and parts[:3] == ["arn", "aws", "iam"] and bool(ACCOUNT_ID.fullmatch(parts[4]))
    return name if valid and name else None


def _publishers(names):
    """Exempted ARNs that are all roles of the set's publisher names."""
    return lambda exempted: all(_role_arn(arn) in names for arn in exempted)


def _administrators(config):
    """Exempted ARNs that are the named administrators; where the config names no deployer, and one role
    more (the deploying session's, unknown to the gate)."""
    named = set(config["administrators"])

    def exempt(exempted: frozenset[str]) -> bool:
        others = exempted - named
        return not others or (
            not config["deployer_named"] and len(others) == 1 and _role_arn(next(iter(others))) is not None
        )

    return exempt


def _covering(statements, served: str):
    """The statements with only the resource patterns that cover every served file by their shape: `*`, a
    spelled-out prefix of the served prefix followed by one `*`, or the platform's own `<prefix>/*/*`. A
    pattern of another shape may match the probed files and miss others (`*/*.*`, the probes' own names);
    a NotResource is not counted."""

    def covers(pattern: str) -> bool:
        literal, _, rest = pattern.partition("*")
        return pattern == f"{served}*/*" or (rest == "" and served.startswith(literal) and not set(literal) & set("?$"))

    return [
        s if s.allow else s._replace(resources=tuple(filter(covers, s.resources)) if not s.not_resource else ())
        for s in statements
    ]


def _gaps(statements, bucket: str, config):
    arn = f"arn:aws:s3:::{bucket}"
    for entry in config["prefixes"]:
        exempt = _publishers(set(entry["publisher_roles"]))
        files = {f"{arn}/{entry['prefix']}/{key}": key for key in SERVED_KEYS}
        guards = _covering(statements, f"{arn}/{entry['prefix']}/")
        open_writes = undenied(guards, WRITE_ACTIONS, files, exempt)
        if open_writes:
            action, key = open_writes[0][0], files[open_writes[0][1]]
            publishers = ", ".join(sorted(entry["publisher_roles"]))
            yield (
                f"does not deny {action} on {entry['prefix']}/{key} (and {len(open_writes) - 1} more action and "
                f"file pairs) to everyone but its publishers ({publishers})"
            )
    if config["prefixes"]:
        administrators = _administrators(config)
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
    remediation="Keep the model repository's OnlyPublishersWrite and OnlyAdministratorsChangeTheBucket "
    "statements (components/serving/model_repository.py).",
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
