"""`plan_diff` on hand-made plans: what the provider replaces, and which nodes an instance refresh replaces."""

import copy

from components.plan.diff import plan_diff, render_diff
from components.plan.replacement import replaced_by
from components.plan.resources import PlanResource

ASG = "aws:autoscaling/group:Group"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


def _group(on_demand=100, types=("g6.xlarge", "g5.xlarge"), skip=True, protect=True, protected="Refresh",
           template_id="lt-1"):
    return PlanResource(
        urn="urn:asg", type=ASG, name="batch-asg", id="batch-asg", parent="urn:group",
        props={"protectFromScaleIn": protect,
               "instanceRefresh": {"strategy": "Rolling",
                                   "preferences": {"skipMatching": skip, "minHealthyPercentage": 90,
                                                   "maxHealthyPercentage": 100,
                                                   "scaleInProtectedInstances": protected}},
               "mixedInstancesPolicy": {
                   "instancesDistribution": {"onDemandBaseCapacity": 1,
                                             "onDemandPercentageAboveBaseCapacity": on_demand},
                   "launchTemplate": {"launchTemplateSpecification": {"launchTemplateId": template_id, "version": "1"},
                                      "overrides": [{"instanceType": t} for t in types]}}})


def _template(image="ami-0123456789abcdef0", user_data="Ym9vdA==", tags=None, urn="urn:lt", ident="lt-1",
              parent="urn:group"):
    return PlanResource(urn=urn, type=TEMPLATE, name="batch-template", id=ident, parent=parent,
                        props={"imageId": image, "userData": user_data, "tags": tags or {"team": "ml"}})


def _nodes(base, head):
    [change] = [c for c in plan_diff(base, head) if c.resource.type == ASG]
    return change.nodes


def test_a_new_spot_share_starts_a_refresh_that_replaces_no_node():
    nodes = _nodes([_group(100), _template()], [_group(30), _template()])
    assert nodes.refresh and nodes.replaces == "none"
    assert any("keep their purchase option" in r for r in nodes.reasons)


def test_without_skip_matching_the_same_change_replaces_every_node():
    # What the stack did before: the provider's refresh on any policy change replaced the whole group.
    assert _nodes([_group(100, skip=False), _template()], [_group(30, skip=False), _template()]).replaces == "all"


def test_an_unprotected_group_itself_replaces_nodes_for_a_new_mix():
    nodes = _nodes([_group(100, protect=False), _template()], [_group(30, protect=False), _template()])
    assert any("gradually replaces running nodes" in r for r in nodes.reasons)


def test_an_added_type_replaces_nothing_and_a_removed_type_only_its_nodes():
    base = [_group(types=("g6.xlarge", "g5.xlarge")), _template()]
    assert _nodes(base, [_group(types=("g6.xlarge", "g5.xlarge", "g6e.xlarge")), _template()]).replaces == "none"
    removed = _nodes(base, [_group(types=("g6.xlarge",)), _template()])
    assert (removed.replaces, removed.types) == ("types", ("g5.xlarge",))


def test_a_new_image_or_user_data_line_rolls_every_node_at_the_groups_pace():
    for head in (_template(image="ami-0fedcba9876543210"), _template(user_data="Ym9vdAo=")):
        nodes = _nodes([_group(), _template()], [_group(), head])
        assert nodes.replaces == "all" and "at least 90% healthy" in nodes.pace
        changes = plan_diff([_group(), _template()], [_group(), head])
        assert {c.action for c in changes} == {"update"}


def test_the_templates_own_tags_make_no_version_and_replace_no_node():
    changes = plan_diff([_group(), _template()], [_group(), _template(tags={"team": "vision"})])
    assert [c.resource.type for c in changes] == [TEMPLATE]


def test_replacements_follow_the_providers_force_new_attributes():
    assert replaced_by("aws:ec2/subnet:Subnet", ["cidrBlock", "tags.team"]) == ["cidrBlock"]
    assert replaced_by("aws:eks/cluster:Cluster", ["vpcConfig.subnetIds"]) == []  # updated in place since 2024
    assert replaced_by("kubernetes:core/v1:Namespace", ["metadata.name"]) == ["metadata.name"]
    assert replaced_by("kubernetes:storage.k8s.io/v1:StorageClass", ["parameters.iops"]) == ["parameters.iops"]
    assert replaced_by("tls:index/selfSignedCert:SelfSignedCert", ["earlyRenewalHours"]) == []
    assert replaced_by("aws:not/known:Thing", ["x"]) is None


def test_a_replacement_creation_deletion_and_refused_change_are_each_named():
    volume = PlanResource("urn:v", "aws:ebs/volume:Volume", "ckpt", {"availabilityZone": "us-east-1a", "size": 64})
    moved = copy.deepcopy(volume)
    moved.props["availabilityZone"] = "us-east-1b"
    klass = PlanResource("urn:c", "kubernetes:storage.k8s.io/v1:StorageClass", "io2",
                         {"metadata": {"name": "io2"}, "volumeBindingMode": "Immediate"})
    bound = copy.deepcopy(klass)
    bound.props["volumeBindingMode"] = "WaitForFirstConsumer"
    new = PlanResource("urn:n", "aws:sqs/queue:Queue", "events", {})
    gone = PlanResource("urn:g", "aws:sqs/queue:Queue", "old", {})
    text = "\n".join(render_diff(plan_diff([volume, klass, gone], [moved, bound, new])))
    assert "+- replace aws:ebs/volume:Volume ckpt: availabilityZone [replaced because of availabilityZone]" in text
    assert "FAILS: the API server refuses to change volumeBindingMode" in text
    assert "+  create  aws:sqs/queue:Queue events" in text and "-  delete  aws:sqs/queue:Queue old" in text
    assert "1 to create, 1 to update in place, 1 to replace, 1 to delete" in text


def test_protected_nodes_a_refresh_may_not_replace_are_said_to_stay():
    for handling in ("Ignore", "Wait"):
        nodes = _nodes([_group(protected=handling), _template()],
                       [_group(protected=handling), _template(image="ami-0fedcba9876543210")])
        assert nodes.replaces == "none" and any(handling in r for r in nodes.reasons)


def test_unknown_template_ids_and_a_new_template_are_told_apart():
    unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # a preview's unknown string
    other = _template(urn="urn:lt-online", ident=unknown, parent="urn:online", image="ami-0aaaaaaaaaaaaaaaa")
    base = [_group(template_id=unknown), _template(ident=unknown), other]
    moved = _template(urn="urn:lt-online", ident=unknown, parent="urn:online", image="ami-0bbbbbbbbbbbbbbbb")
    # Only the other group's template changed: this group, whose template is its sibling, replaces nothing.
    assert [c.resource.urn for c in plan_diff(base, [_group(template_id=unknown), _template(ident=unknown), moved])] \
        == ["urn:lt-online"]
    # The group names another template: every node is replaced, whatever the templates' inputs.
    assert _nodes([_group(), _template()], [_group(template_id="lt-2"), _template(ident="lt-2")]).replaces == "all"


def test_a_deleted_group_terminates_its_nodes():
    from components.plan.diff import replaced_nodes
    changes = plan_diff([_group(), _template()], [_template()])
    assert [(c.action, c.nodes.replaces) for c in changes] == [("delete", "all")]
    assert [group for group, _ in replaced_nodes(changes)] == ["batch-asg"]
