"""Replication over the prod plan, with its stack config: into a bucket of its own it passes, out of the stack
or into the model bucket it fails; the destination is read by name from an ARN or a bare name."""

import pytest

from components.plan.resources import PlanResource
from policies.expectations import stack_policy_config
from policies.rules.aws_s3_bucket_restrict_replication import RULE as REPLICATION
from seedance.check_command import plan_resources
from tests.conftest import _stack_plan
from tests.stacks import stack_config

PROD = stack_config("prod")
MODELS = "seedance-prod-models-123456789012"
INCIDENTS = "seedance-prod-incidents-123456789012"


def _replication(source, destination):
    return PlanResource(
        "urn:pulumi:prod::seedance-gpu::aws:s3/bucketReplicationConfig:BucketReplicationConfig::r",
        "aws:s3/bucketReplicationConfig:BucketReplicationConfig",
        "r",
        {"bucket": source, "rules": [{"status": "Enabled", "destination": {"bucket": destination}}]},
    )


@pytest.mark.parametrize(
    "source, destination, refused",
    [
        (MODELS, f"arn:aws:s3:::{INCIDENTS}", None),
        (MODELS, INCIDENTS, None),
        (MODELS, "arn:aws:s3:::archive-elsewhere", "a bucket the plan does not make"),
        (INCIDENTS, f"arn:aws:s3:::{MODELS}", "the model bucket"),
        (INCIDENTS, f"arn:aws:s3:::{MODELS}/seedance/video", "the model bucket"),
    ],
)
def test_replication_stays_in_the_stacks_buckets_and_out_of_the_model_bucket(source, destination, refused):
    config = {**REPLICATION.defaults(), **stack_policy_config(PROD)[REPLICATION.name]}
    plan = [*plan_resources(_stack_plan("prod")), _replication(source, destination)]
    found = [message for _, message in REPLICATION.check_stack(plan, config)]
    assert (found == []) if refused is None else (len(found) == 1 and refused in found[0])
