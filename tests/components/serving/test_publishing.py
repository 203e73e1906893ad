"""Who may write what under a served prefix, evaluated (tests/policy_evaluation.py) rather than compared:
the publisher role writes everything, a team's people through the operator role only each model's
config and history (the switch: promote, roll back), everyone else nothing."""

import pytest

from components.serving.model_repository import bucket_policy
from components.serving.publishing import WRITE_ACTIONS, operator_policy
from tests.policy_evaluation import Request, allows, denies

BUCKET = "arn:aws:s3:::c-models-111122223333"
PUBLISHER = "arn:aws:iam::111122223333:role/c-triton-video-publisher"
OPERATOR = "arn:aws:iam::111122223333:role/c-triton-video-operator"
OTHER_SET_OPERATOR = "arn:aws:iam::111122223333:role/c-triton-speech-operator"
POLICY = bucket_policy(
    BUCKET,
    {"seedance/video": [PUBLISHER], "seedance/speech": ["arn:aws:iam::111122223333:role/c-triton-speech-publisher"]},
    ["arn:aws:iam::111122223333:role/deployer"],
    {"seedance/video": [OPERATOR], "seedance/speech": [OTHER_SET_OPERATOR]},
)
SWITCH = ["seedance/video/identity/config.pbtxt", "seedance/video/identity/seedance-history.json"]
MODEL_FILES = ["seedance/video/identity/1/model.py", "seedance/video/identity/labels.txt", "seedance/video/x/2/w.bin"]


def writes(principal, key, action="s3:PutObject"):
    return not denies(POLICY, Request(action, f"{BUCKET}/{key}", {"aws:PrincipalArn": principal}))


@pytest.mark.parametrize("action", WRITE_ACTIONS)
def test_the_publisher_writes_every_file_and_the_operator_only_the_switch(action):
    assert all(writes(PUBLISHER, key, action) for key in [*SWITCH, *MODEL_FILES])
    assert all(writes(OPERATOR, key, action) for key in SWITCH)
    assert not any(writes(OPERATOR, key, action) for key in MODEL_FILES)


def test_an_operator_switches_its_own_set_only_and_anyone_else_nothing():
    assert not any(writes(OTHER_SET_OPERATOR, key) for key in SWITCH)
    someone = "arn:aws:iam::111122223333:role/video-ml-engineers"
    assert not any(writes(someone, key) for key in [*SWITCH, *MODEL_FILES])


def test_the_operators_own_policy_reads_the_set_and_writes_the_switch_only():
    policy = operator_policy(BUCKET, ["seedance/video"], "arn:aws:kms:us-east-1:111122223333:key/k", "us-east-1")
    assert all(allows(policy, Request("s3:PutObject", f"{BUCKET}/{key}")) for key in SWITCH)
    assert not any(allows(policy, Request("s3:PutObject", f"{BUCKET}/{key}")) for key in MODEL_FILES)
    assert allows(policy, Request("s3:GetObject", f"{BUCKET}/seedance/video/identity/1/model.py"))
    assert not allows(policy, Request("s3:GetObject", f"{BUCKET}/seedance/speech/m/config.pbtxt"))
    assert not allows(policy, Request("s3:DeleteObject", f"{BUCKET}/{SWITCH[0]}"))
