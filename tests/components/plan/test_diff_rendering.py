"""What `seedance diff` prints for each kind of change, whole, in tests/golden/diff/: the words a
reviewer reads before a change reaches the nodes are pinned, not only the verdicts.

Regenerate after an intended change, then review the diff:
    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/components/plan/test_diff_rendering.py
"""

import copy
import os
from pathlib import Path

import pytest

from components.plan.diff import plan_diff, render_diff
from components.plan.resources import PlanResource
from tests.components.plan.test_diff import _group, _template

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "diff"
VOLUME = PlanResource("urn:v", "aws:ebs/volume:Volume", "ckpt", {"availabilityZone": "us-east-1a", "size": 64})
KLASS = PlanResource(
    "urn:c",
    "kubernetes:storage.k8s.io/v1:StorageClass",
    "io2",
    {"metadata": {"name": "io2"}, "volumeBindingMode": "Immediate"},
)


def changed(resource, **props):
    new = copy.deepcopy(resource)
    new.props.update(props)
    return new


SCENARIOS = {
    "spot-share": ([_group(100), _template()], [_group(30), _template()]),
    "spot-share-without-skip-matching": ([_group(100, skip=False), _template()], [_group(30, skip=False), _template()]),
    "spot-share-unprotected": ([_group(100, protect=False), _template()], [_group(30, protect=False), _template()]),
    "type-added": ([_group(), _template()], [_group(types=("g6.xlarge", "g5.xlarge", "g6e.xlarge")), _template()]),
    "type-removed": ([_group(), _template()], [_group(types=("g6.xlarge",)), _template()]),
    "new-image": ([_group(), _template()], [_group(), _template(image="ami-0fedcba9876543210")]),
    "new-image-protected-ignore": (
        [_group(protected="Ignore"), _template()],
        [_group(protected="Ignore"), _template(image="ami-0fedcba9876543210")],
    ),
    "new-image-protected-wait": (
        [_group(protected="Wait"), _template()],
        [_group(protected="Wait"), _template(image="ami-0fedcba9876543210")],
    ),
    "new-template": ([_group(), _template()], [_group(template_id="lt-2"), _template(ident="lt-2")]),
    "template-tags-only": ([_group(), _template()], [_group(), _template(tags={"team": "vision"})]),
    "group-deleted": ([_group(), _template()], [_template()]),
    "replace-create-delete-refuse": (
        [VOLUME, KLASS, PlanResource("urn:g", "aws:sqs/queue:Queue", "old", {})],
        [
            changed(VOLUME, availabilityZone="us-east-1b"),
            changed(KLASS, volumeBindingMode="WaitForFirstConsumer"),
            PlanResource("urn:n", "aws:sqs/queue:Queue", "events", {}),
        ],
    ),
    "unknown-type": (
        [PlanResource("urn:x", "aws:new/thing:Thing", "x", {"a": 1})],
        [PlanResource("urn:x", "aws:new/thing:Thing", "x", {"a": 2})],
    ),
    "nothing": ([_group(), _template()], [_group(), _template()]),
    # Every field that forces a replacement, and every field the API server refuses, is named.
    "two-reasons": (
        [VOLUME, KLASS],
        [
            changed(VOLUME, availabilityZone="us-east-1b", snapshotId="snap-1"),
            changed(KLASS, volumeBindingMode="WaitForFirstConsumer", reclaimPolicy="Retain"),
        ],
    ),
    # Six changed inputs are listed whole; a seventh is counted, not listed.
    "six-inputs": (
        [PlanResource("urn:q", "aws:sqs/queue:Queue", "q", {f"p{i}": 0 for i in range(6)})],
        [PlanResource("urn:q", "aws:sqs/queue:Queue", "q", {f"p{i}": 1 for i in range(6)})],
    ),
    "seven-inputs": (
        [PlanResource("urn:q", "aws:sqs/queue:Queue", "q", {f"p{i}": 0 for i in range(7)})],
        [PlanResource("urn:q", "aws:sqs/queue:Queue", "q", {f"p{i}": 1 for i in range(7)})],
    ),
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_the_rendered_diff_matches_its_golden_file(scenario):
    base, head = SCENARIOS[scenario]
    text = "\n".join(render_diff(plan_diff(base, head))) + "\n"
    path = GOLDEN / f"{scenario}.txt"
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert text == path.read_text(), f"regenerate: UPDATE_GOLDEN=1 pytest {__file__}"
