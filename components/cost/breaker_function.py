"""The budget breaker as AWS Lambda runs it, from the budget's SNS topic: the source's 85 % step (stop
non-core experiments) and 95 % step (dev and staging to spot only), with an incident record.

Standard library only at import, so the function's archive is this file and components/compute/
labels.py (components/compute/lambda_function.py); boto3 comes with the Lambda runtime and is imported
by `handler` alone.
The `seedance breaker` command runs the same steps by hand.

What each step does, on the stack's GPU Auto Scaling groups (found by the cluster's tag):
- 85 % (ACTUAL): in dev and staging, batch groups (where experiments run) stop growing: MaxSize
  becomes the current desired size, so running jobs finish and no new node starts for new ones.
- 95 % (ACTUAL): in dev and staging, every GPU group goes spot only (On-Demand base 0, 0 % above).
  Steps only escalate: a 95 % alert applies the 85 % step too, so an 85 % alert that arrives after it
  changes nothing. Prod is core: its groups are recorded, never changed. FORECASTED alerts change
  nothing and are not recorded (the budget's e-mail is their record).

What a step needs is judged from each group's values, and what it replaces is tagged on the group
(`BEFORE_TAG`) before the group is changed: a repeated alert changes nothing, a retry after a
partial run finishes it, and `reset` restores the stack's values. A step is claimed with a
conditional write (two deliveries at once cannot both act), and one record per budget, month and
step is written to the incident bucket (rebuilt from the groups, so a retry records the whole step)
and published to the topic.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from components.compute.labels import BREAKER_TAG, CAPACITY_BLOCK_TAG, CLASS_TAG, DEGRADE, SPOT_ONLY

BEFORE_TAG = "seedance.io/budget-breaker-before"
# The 85 % step's ceiling, as it first set it: a later run (the schedule's, every 15 minutes) keeps it, and
# never lowers it to a size the autoscaler scaled in to since (the step would ratchet the group down).
CEILING_TAG = "seedance.io/budget-breaker-ceiling"
# What the breaker publishes; it acts only on messages AWS Budgets sent (the topic also carries
# Alertmanager's alerts, its own records and failed deliveries).
SUBJECT_PREFIX = "seedance budget breaker"
BUDGETS_SUBJECT_PREFIX = "AWS Budgets"
CHANGEABLE_ENVS = ("dev", "staging")

_FIELD = re.compile(r"^(Budget Name|Budgeted Amount|Alert Type|Alert Threshold):\s*(.+?)\s*$", re.MULTILINE)
_DATE = re.compile(r"AWS Budget Notification ([A-Z][a-z]+ \d{1,2}, \d{4})")


def _usd(text: str) -> float:
    return float(re.sub(r"[^0-9.]", "", text))


@dataclass(frozen=True)
class BudgetAlert:
    budget: str
    alert_type: str  # ACTUAL or FORECASTED
    percent: float  # the threshold crossed, as a share of the budgeted amount
    budgeted_usd: float
    period: str  # YYYY-MM of the notification


def parse_budget_message(text: str) -> BudgetAlert | None:
    """An AWS Budgets notification as it reaches SNS ("AWS Budget Notification <date>", then "Budget
    Name:", "Budgeted Amount:", "Alert Type:", "Alert Threshold: > $..." lines); None for anything else."""
    fields = dict(_FIELD.findall(text or ""))
    date = _DATE.search(text or "")
    if len(fields) < 4 or date is None:
        return None
    try:
        budgeted, threshold = _usd(fields["Budgeted Amount"]), _usd(fields["Alert Threshold"])
        day = datetime.strptime(date.group(1), "%B %d, %Y")
    except ValueError:
        return None
    if budgeted <= 0:
        return None
    return BudgetAlert(
        budget=fields["Budget Name"],
        alert_type=fields["Alert Type"].upper(),
        percent=round(100 * threshold / budgeted, 1),
        budgeted_usd=budgeted,
        period=f"{day:%Y-%m}",
    )


def step_of(alert: BudgetAlert) -> int | None:
    """The highest step an ACTUAL alert reaches (FORECASTED ones reach none)."""
    if alert.alert_type != "ACTUAL":
        return None
    return next((step for step in (SPOT_ONLY, DEGRADE) if alert.percent >= step), None)


def _tags(group: dict) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in group.get("Tags", [])}


def _distribution(group: dict) -> dict:
    return group.get("MixedInstancesPolicy", {}).get("InstancesDistribution", {})


def gpu_groups(autoscaling: Any, cluster_name: str) -> list[dict]:
    """The cluster's seedance GPU groups (tagged with a workload class), every page; not a Capacity Block's
    group: it is paid, and a plain launch template has no mix to move."""
    pages = autoscaling.get_paginator("describe_auto_scaling_groups").paginate(
        Filters=[{"Name": "tag-key", "Values": [f"kubernetes.io/cluster/{cluster_name}"]}]
    )
    return [
        g
        for page in pages
        for g in page["AutoScalingGroups"]
        if CLASS_TAG in _tags(g) and CAPACITY_BLOCK_TAG not in _tags(g)
    ]


def spot_only_policy(described: dict) -> dict:
    """The group's whole mixed instances policy with a zero On-Demand base and percentage. Describe
    returns the template by id and by name; an update may name it only one way."""
    policy = {
        "InstancesDistribution": {
            **described.get("InstancesDistribution", {}),
            "OnDemandBaseCapacity": 0,
            "OnDemandPercentageAboveBaseCapacity": 0,
        }
    }
    if "LaunchTemplate" in described:
        template = dict(described["LaunchTemplate"])
        spec = dict(template.get("LaunchTemplateSpecification", {}))
        if "LaunchTemplateId" in spec:
            spec.pop("LaunchTemplateName", None)
        policy["LaunchTemplate"] = {**template, "LaunchTemplateSpecification": spec}
    return policy


@dataclass
class GroupChange:
    name: str
    arn: str | None
    workload_class: str | None
    owner: str | None
    before: dict = field(default_factory=dict)
    after: dict = field(default_factory=dict)


def _current(group: dict) -> dict:
    distribution = _distribution(group)
    return {
        "max_size": group["MaxSize"],
        "on_demand_base": distribution.get("OnDemandBaseCapacity", 0),
        "on_demand_percentage": distribution.get("OnDemandPercentageAboveBaseCapacity", 100),
    }


def planned_changes(groups: list[dict], env: str, step: int) -> list[GroupChange]:
    """What the step changes on each group, judged from the group's values (not from tags: a step that
    is already in effect, by the breaker, by hand or by the stack's `budget_breaker`, changes nothing).
    `before` keeps what an earlier step recorded, so a reset restores the stack's values."""
    changes = []
    for group in groups:
        tags = _tags(group)
        recorded = json.loads(tags.get(BEFORE_TAG, "{}"))
        current = _current(group)
        change = GroupChange(
            group["AutoScalingGroupName"], group.get("AutoScalingGroupARN"), tags.get(CLASS_TAG), tags.get("team")
        )
        if env in CHANGEABLE_ENVS:
            first = tags.get(CEILING_TAG, "")
            ceiling = int(first) if first.isdigit() else max(group["DesiredCapacity"], group["MinSize"])
            if step >= DEGRADE and tags.get(CLASS_TAG) == "batch" and current["max_size"] > ceiling:
                change.before["max_size"] = recorded.get("max_size", current["max_size"])
                change.after["max_size"] = ceiling
            if step >= SPOT_ONLY and (current["on_demand_base"], current["on_demand_percentage"]) != (0, 0):
                for key in ("on_demand_base", "on_demand_percentage"):
                    change.before[key] = recorded.get(key, current[key])
                change.after.update(on_demand_base=0, on_demand_percentage=0)
        changes.append(change)
    return changes


def _tag(name: str, key: str, value: str) -> dict:
    return {
        "ResourceId": name,
        "ResourceType": "auto-scaling-group",
        "Key": key,
        "Value": value,
        "PropagateAtLaunch": False,
    }


def apply_changes(autoscaling: Any, groups: list[dict], changes: list[GroupChange]) -> None:
    """Each change: first the tag that records what it replaces (so a retry after a failed update still
    knows the stack's values), then the update, then the spot-only mark the policies read."""
    described = {g["AutoScalingGroupName"]: g for g in groups}
    for change in changes:
        if not change.after:
            continue
        group = described[change.name]
        before = {**json.loads(_tags(group).get(BEFORE_TAG, "{}")), **change.before}
        recorded = [_tag(change.name, BEFORE_TAG, json.dumps(before, sort_keys=True))]
        if "max_size" in change.after:  # the ceiling the step set, kept by every later run
            recorded.append(_tag(change.name, CEILING_TAG, str(change.after["max_size"])))
        autoscaling.create_or_update_tags(Tags=recorded)
        update: dict[str, Any] = {"AutoScalingGroupName": change.name}
        if "max_size" in change.after:
            update["MaxSize"] = change.after["max_size"]
        if "on_demand_base" in change.after:
            update["MixedInstancesPolicy"] = spot_only_policy(group.get("MixedInstancesPolicy", {}))
        autoscaling.update_auto_scaling_group(**update)
        if "on_demand_base" in change.after:
            autoscaling.create_or_update_tags(Tags=[_tag(change.name, BREAKER_TAG, "on")])


def reset(autoscaling: Any, groups: list[dict]) -> list[str]:
    """Put back what the breaker replaced on each group; the names of the groups reset. The spot-only
    mark goes only where the breaker set it (the stack's own `budget_breaker` sets it too)."""
    done = []
    for group in groups:
        tags = _tags(group)
        if BEFORE_TAG not in tags:
            continue
        before = json.loads(tags[BEFORE_TAG])
        update: dict[str, Any] = {"AutoScalingGroupName": group["AutoScalingGroupName"]}
        if "max_size" in before:
            update["MaxSize"] = before["max_size"]
        if "on_demand_base" in before:
            policy = spot_only_policy(group.get("MixedInstancesPolicy", {}))
            policy["InstancesDistribution"].update(
                OnDemandBaseCapacity=before["on_demand_base"],
                OnDemandPercentageAboveBaseCapacity=before["on_demand_percentage"],
            )
            update["MixedInstancesPolicy"] = policy
        autoscaling.update_auto_scaling_group(**update)
        keys = [
            BEFORE_TAG,
            *([CEILING_TAG] if CEILING_TAG in tags else []),
            *([BREAKER_TAG] if "on_demand_base" in before else []),
        ]
        autoscaling.delete_tags(
            Tags=[
                {"ResourceId": group["AutoScalingGroupName"], "ResourceType": "auto-scaling-group", "Key": key}
                for key in keys
            ]
        )
        done.append(group["AutoScalingGroupName"])
    return done


def incident_record(
    *,
    stack: str,
    env: str,
    step: int | None,
    alert: BudgetAlert | None,
    changes: list[GroupChange],
    applied: bool,
    now: datetime,
    message_id: str | None = None,
) -> dict:
    return {
        "event": f"budget-breaker-{step}-percent" if step else "budget-alert-recorded",
        "stack": stack,
        "env": env,
        "at": now.isoformat(),
        "applied": applied,
        "message_id": message_id,
        "alert": None
        if alert is None
        else {
            "budget": alert.budget,
            "type": alert.alert_type,
            "percent": alert.percent,
            "budgeted_usd": alert.budgeted_usd,
            "period": alert.period,
        },
        "groups": [
            {
                "name": c.name,
                "arn": c.arn,
                "workload_class": c.workload_class,
                "owner": c.owner,
                "changed": c.before != c.after,
                "before": c.before,
                "after": c.after,
            }
            for c in changes
        ],
    }


@dataclass(frozen=True)
class Settings:
    stack: str
    env: str
    cluster_name: str
    budget_name: str
    account_id: str
    bucket: str
    key_arn: str
    topic_arn: str

    @classmethod
    def from_environment(cls, environ: dict) -> Settings:
        return cls(
            stack=environ["STACK"],
            env=environ["STACK_ENV"],
            cluster_name=environ["CLUSTER_NAME"],
            budget_name=environ["BUDGET_NAME"],
            account_id=environ["ACCOUNT_ID"],
            bucket=environ["INCIDENT_BUCKET"],
            key_arn=environ["INCIDENT_KEY_ARN"],
            topic_arn=environ["TOPIC_ARN"],
        )


def confirmed_percent(budgets: Any, settings: Settings) -> float:
    """The budget's actual spend as a share of its limit, from AWS Budgets itself: a message on the topic
    is only a claim (anyone allowed to publish there could send one), the budget is the fact."""
    budget = budgets.describe_budget(AccountId=settings.account_id, BudgetName=settings.budget_name)["Budget"]
    limit = float(budget["BudgetLimit"]["Amount"])
    spent = float(budget.get("CalculatedSpend", {}).get("ActualSpend", {}).get("Amount", 0))
    return 100 * spent / limit if limit > 0 else 0.0


def _recorded_steps(s3: Any, settings: Settings, prefix: str) -> set[int]:
    listed = s3.list_objects_v2(Bucket=settings.bucket, Prefix=prefix).get("Contents", [])
    return {
        int(Path(o["Key"]).stem) for o in listed if Path(o["Key"]).suffix == ".json" and Path(o["Key"]).stem.isdigit()
    }


def _error_code(error: Exception) -> str | None:
    return (getattr(error, "response", None) or {}).get("Error", {}).get("Code")


def _claimed(s3: Any, settings: Settings, key: str, message_id: str) -> bool:
    """Whether this message may act on the step: the first to write the claim (a conditional write, so two
    deliveries at once cannot both act), or a retry of the message that wrote it."""
    try:
        _put_if_absent(
            s3,
            Bucket=settings.bucket,
            Key=key,
            Body=message_id.encode(),
            ServerSideEncryption="aws:kms",
            SSEKMSKeyId=settings.key_arn,
        )
        return True
    except Exception as error:  # botocore's ClientError: the runtime's SDK, not imported here
        if _error_code(error) not in ("PreconditionFailed", "ConditionalRequestConflict"):
            raise
    return s3.get_object(Bucket=settings.bucket, Key=key)["Body"].read().decode() == message_id


def _put_if_absent(s3: Any, **request: Any) -> None:
    """PutObject that fails when the key exists. S3 honours `If-None-Match: *` whatever the SDK; botocore
    names it IfNoneMatch from 1.35 on, and the Lambda runtime's bundled SDK may be older: there the
    header is added to the request before it is signed (botocore's event hooks, in every version)."""
    if "IfNoneMatch" in s3.meta.service_model.operation_model("PutObject").input_shape.members:
        s3.put_object(IfNoneMatch="*", **request)
        return

    def if_none_match(request: Any, **_: Any) -> None:
        request.headers["If-None-Match"] = "*"

    s3.meta.events.register_first("before-sign.s3.PutObject", if_none_match, unique_id="seedance-if-none-match")
    try:
        s3.put_object(**request)
    finally:
        s3.meta.events.unregister("before-sign.s3.PutObject", unique_id="seedance-if-none-match")


def state_of(groups: list[dict]) -> list[GroupChange]:
    """What the breaker has replaced on each group, from the groups themselves: what its tag records
    and the values now. A retry after a partial run records the whole step this way."""
    changes = []
    for group in groups:
        tags = _tags(group)
        recorded, current = json.loads(tags.get(BEFORE_TAG, "{}")), _current(group)
        changes.append(
            GroupChange(
                group["AutoScalingGroupName"],
                group.get("AutoScalingGroupARN"),
                tags.get(CLASS_TAG),
                tags.get("team"),
                before=recorded,
                after={key: current[key] for key in recorded},
            )
        )
    return changes


RESET_PREFIX = "reset-"  # incidents/<month>/<budget>/reset-<time>.json: a person put the groups back


def held_step(s3: Any, settings: Settings, now: datetime) -> int | None:
    """The step the breaker holds this month: the highest it recorded, unless a reset was recorded after it."""
    prefix = f"incidents/{now:%Y-%m}/{settings.budget_name}/"
    listed = s3.list_objects_v2(Bucket=settings.bucket, Prefix=prefix).get("Contents", [])
    steps = [
        (o["LastModified"], int(Path(o["Key"]).stem))
        for o in listed
        if Path(o["Key"]).suffix == ".json" and Path(o["Key"]).stem.isdigit()
    ]
    resets = [o["LastModified"] for o in listed if Path(o["Key"]).name.startswith(RESET_PREFIX)]
    if not steps or (resets and max(resets) >= max(steps)[0]):
        return None
    return max(step for _at, step in steps)


def incident_bucket(cluster_name: str, account_id: str) -> str:
    """The breaker's record bucket (bucket names are global: the account keeps the stack's unique)."""
    return f"{cluster_name}-incidents-{account_id}"


def monthly_budget(cluster_name: str) -> str:
    """The stack's monthly budget, as BudgetAlerts names it."""
    return f"{cluster_name}-budget-monthly"


def record_reset(s3: Any, bucket: str, budget_name: str, groups: list[str], now: datetime) -> str:
    """The reset as a record: the breaker holds no step of this month past it (the bucket's default
    encryption, the stack key, applies)."""
    key = f"incidents/{now:%Y-%m}/{budget_name}/{RESET_PREFIX}{now:%Y%m%dT%H%M%S}.json"
    s3.put_object(
        Bucket=bucket,
        Key=key,
        Body=json.dumps({"event": "budget-breaker-reset", "at": now.isoformat(), "groups": groups}).encode(),
        ContentType="application/json",
    )
    return key


def hold(settings: Settings, clients: dict, now: datetime) -> dict | None:
    """Put the held step back on every group an `up` (or a hand) moved off it, judged from the groups'
    current values: a new launch-template version rewrites the instance mix with the stack's on-demand
    base, and AWS Budgets says 95 % once a month. The record of the re-application is kept beside the step's."""
    step = held_step(clients["s3"], settings, now)
    if step is None:
        return None
    autoscaling = clients["autoscaling"]
    groups = gpu_groups(autoscaling, settings.cluster_name)
    changes = planned_changes(groups, settings.env, step)
    if not any(c.after for c in changes):
        return None
    apply_changes(autoscaling, groups, changes)
    record = incident_record(
        stack=settings.stack,
        env=settings.env,
        step=step,
        alert=None,
        changes=[c for c in changes if c.after],
        applied=True,
        now=now,
    )
    record["event"] = f"budget-breaker-{step}-percent-held"
    body = json.dumps(record, indent=2, sort_keys=True)
    clients["s3"].put_object(
        Bucket=settings.bucket,
        Key=f"incidents/{now:%Y-%m}/{settings.budget_name}/held-{now:%Y%m%dT%H%M%S}.json",
        Body=body.encode(),
        ContentType="application/json",
        ServerSideEncryption="aws:kms",
        SSEKMSKeyId=settings.key_arn,
    )
    changed = [c.name for c in changes if c.after]
    clients["sns"].publish(
        TopicArn=settings.topic_arn,
        Subject=f"{SUBJECT_PREFIX}: {step}% step put back ({settings.env})"[:100],
        Message=f"{', '.join(changed)} had left the breaker's {step}% step (an `up` or a hand); "
        f"put back. `seedance breaker --stack {settings.stack} --reset` ends the step.\n\n{body}",
    )
    return record


def handle_message(sns: dict, settings: Settings, clients: dict, now: datetime) -> dict | None:
    """One SNS message: the record written, or None when there was nothing to do."""
    if not (sns.get("Subject") or "").startswith(BUDGETS_SUBJECT_PREFIX):
        return None  # an alert, a record of ours or a failed delivery: not the budget's
    alert = parse_budget_message(sns.get("Message", ""))
    if alert is None:
        # Not a budget notification as this function reads them: say so, loudly, once per message.
        clients["sns"].publish(
            TopicArn=settings.topic_arn,
            Subject=f"{SUBJECT_PREFIX}: message not understood",
            Message=f"The budget breaker of {settings.stack} could not read message "
            f"{sns.get('MessageId')}; nothing was changed. Run `seedance breaker "
            f"--stack {settings.stack}` by hand if the budget was crossed.",
        )
        return None
    if alert.budget != settings.budget_name:
        return None  # another budget on a shared topic
    step = step_of(alert)
    prefix = f"incidents/{alert.period}/{alert.budget}/"
    if step is None or any(recorded >= step for recorded in _recorded_steps(clients["s3"], settings, prefix)):
        # A forecast, or a step (or a higher one) this month already recorded: nothing new, but the step
        # held is put back where the groups left it.
        return hold(settings, clients, now)
    confirmed = confirmed_percent(clients["budgets"], settings)
    if confirmed < step:
        clients["sns"].publish(
            TopicArn=settings.topic_arn,
            Subject=f"{SUBJECT_PREFIX}: alert not confirmed",
            Message=f"A message on the topic says {alert.budget} crossed {step}%, but AWS Budgets "
            f"reports {confirmed:.1f}% spent: nothing was changed ({sns.get('MessageId')}).",
        )
        return None
    message_id = sns.get("MessageId") or "unknown"
    if not _claimed(clients["s3"], settings, f"{prefix}{step}.claim", message_id):
        return None  # another delivery is handling this step
    autoscaling = clients["autoscaling"]
    groups = gpu_groups(autoscaling, settings.cluster_name)
    apply_changes(autoscaling, groups, planned_changes(groups, settings.env, step))
    changes = state_of(gpu_groups(autoscaling, settings.cluster_name))
    record = incident_record(
        stack=settings.stack,
        env=settings.env,
        step=step,
        alert=alert,
        changes=changes,
        applied=True,
        now=now,
        message_id=message_id,
    )
    body = json.dumps(record, indent=2, sort_keys=True)
    clients["s3"].put_object(
        Bucket=settings.bucket,
        Key=f"{prefix}{step}.json",
        Body=body.encode(),
        ContentType="application/json",
        ServerSideEncryption="aws:kms",
        SSEKMSKeyId=settings.key_arn,
    )
    changed = [c.name for c in changes if c.before != c.after]
    clients["sns"].publish(
        TopicArn=settings.topic_arn,
        Subject=f"{SUBJECT_PREFIX}: {alert.budget} at {step}% ({settings.env})"[:100],
        Message=f"{len(changed)} GPU group(s) changed: {', '.join(changed) or 'none'}.\n\n{body}",
    )
    return record


def handler(event: dict, context: Any = None) -> dict:
    """The Lambda entry point (`breaker_function.handler`)."""
    import boto3  # the Lambda runtime's

    settings = Settings.from_environment(dict(os.environ))
    clients = {name: boto3.client(name) for name in ("autoscaling", "s3", "sns")}
    clients["budgets"] = boto3.client("budgets", region_name="us-east-1")  # Budgets' one endpoint
    now = datetime.now(UTC)
    if event.get("source") == "aws.events":  # the schedule: hold the month's step through any `up`
        return {"handled": int(hold(settings, clients, now) is not None)}
    records = [handle_message(r.get("Sns", {}), settings, clients, now) for r in event.get("Records", [])]
    return {"handled": sum(1 for r in records if r is not None)}
