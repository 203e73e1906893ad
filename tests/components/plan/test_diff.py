"""`plan_diff` on hand-made plans: what the provider replaces, and which nodes an instance refresh replaces."""

import copy
from dataclasses import replace

from components.plan.diff import plan_diff, render_diff
from components.plan.replacement import replaced_by
from components.plan.resources import PlanResource

ASG = "aws:autoscaling/group:Group"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


def _group(
    on_demand=100, types=("g6.xlarge", "g5.xlarge"), skip=True, protect=True, protected="Refresh", template_id="lt-1"
):
    return PlanResource(
        urn="urn:asg",
        type=ASG,
        name="batch-asg",
        id="batch-asg",
        parent="urn:group",
        props={
            "protectFromScaleIn": protect,
            "instanceRefresh": {
                "strategy": "Rolling",
                "preferences": {
                    "skipMatching": skip,
                    "minHealthyPercentage": 90,
                    "maxHealthyPercentage": 100,
                    "scaleInProtectedInstances": protected,
                },
            },
            "mixedInstancesPolicy": {
                "instancesDistribution": {"onDemandBaseCapacity": 1, "onDemandPercentageAboveBaseCapacity": on_demand},
                "launchTemplate": {
                    "launchTemplateSpecification": {"launchTemplateId": template_id, "version": "1"},
                    "overrides": [{"instanceType": t} for t in types],
                },
            },
        },
    )


def _template(
    image="ami-0123456789abcdef0", user_data="Ym9vdA==", tags=None, urn="urn:lt", ident="lt-1", parent="urn:group"
):
    return PlanResource(
        urn=urn,
        type=TEMPLATE,
        name="batch-template",
        id=ident,
        parent=parent,
        props={"imageId": image, "userData": user_data, "tags": tags or {"team": "ml"}},
    )


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
    klass = PlanResource(
        "urn:c",
        "kubernetes:storage.k8s.io/v1:StorageClass",
        "io2",
        {"metadata": {"name": "io2"}, "volumeBindingMode": "Immediate"},
    )
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
        nodes = _nodes(
            [_group(protected=handling), _template()],
            [_group(protected=handling), _template(image="ami-0fedcba9876543210")],
        )
        assert nodes.replaces == "none" and any(handling in r for r in nodes.reasons)


def test_unknown_template_ids_and_a_new_template_are_told_apart():
    unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # a preview's unknown string
    other = _template(urn="urn:lt-online", ident=unknown, parent="urn:online", image="ami-0aaaaaaaaaaaaaaaa")
    base = [_group(template_id=unknown), _template(ident=unknown), other]
    moved = _template(urn="urn:lt-online", ident=unknown, parent="urn:online", image="ami-0bbbbbbbbbbbbbbbb")
    # Only the other group's template changed: this group, whose template is its sibling, replaces nothing.
    assert [
        c.resource.urn for c in plan_diff(base, [_group(template_id=unknown), _template(ident=unknown), moved])
    ] == ["urn:lt-online"]
    # The group names another template: every node is replaced, whatever the templates' inputs.
    assert _nodes([_group(), _template()], [_group(template_id="lt-2"), _template(ident="lt-2")]).replaces == "all"


def test_a_deleted_group_terminates_its_nodes():
    from components.plan.diff import replaced_nodes

    changes = plan_diff([_group(), _template()], [_template()])
    assert [(c.action, c.nodes.replaces) for c in changes] == [("delete", "all")]
    assert [group for group, _ in replaced_nodes(changes)] == ["batch-asg"]


# Which template a group launches from: by the id it names, else the one it depends on, else the only one
# beside it. Each case has a decoy template a wrong match would pick.
NEW_IMAGE = "ami-0fedcba9876543210"
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


def _launches_from(group, templates, moved_urn):
    """The group's node effect when only the template `moved_urn` gets a new image (None: no effect)."""
    moved = [
        _template(image=NEW_IMAGE, urn=t.urn, ident=t.id, parent=t.parent) if t.urn == moved_urn else t
        for t in templates
    ]
    return [c.nodes for c in plan_diff([group, *templates], [group, *moved]) if c.resource.type == ASG]


def _plain_template_group(template_id):
    group = _group()
    del group.props["mixedInstancesPolicy"]
    group.props["launchTemplate"] = {"id": template_id, "version": "$Latest"}
    return group


def test_a_group_launches_from_the_template_whose_id_it_names():
    siblings = [_template(urn="urn:lt1", ident="lt-1"), _template(urn="urn:lt2", ident="lt-2")]
    for group in (_group(template_id="lt-2"), _plain_template_group("lt-2")):
        [nodes] = _launches_from(group, siblings, "urn:lt2")
        assert nodes.replaces == "all" and "new launch template version" in nodes.reasons
        assert _launches_from(group, siblings, "urn:lt1") == []


def test_an_unknown_id_is_not_matched_and_the_dependency_decides():
    """At preview a new template's id is unknown, as is the id the group names: they are not the same."""
    templates = [_template(urn="urn:new", ident=UNKNOWN), _template(urn="urn:lt2", ident="lt-2")]
    group = replace(_group(template_id=UNKNOWN), dependencies=("urn:lt2",))
    assert _launches_from(group, templates, "urn:new") == []
    [nodes] = _launches_from(group, templates, "urn:lt2")
    assert nodes.replaces == "all"


def test_without_an_id_the_one_template_beside_the_group_decides():
    templates = [
        _template(urn="urn:lt1", ident=UNKNOWN, parent="urn:other"),
        _template(urn="urn:lt2", ident=UNKNOWN, parent="urn:group"),
    ]
    group = _group(template_id=UNKNOWN)
    assert _launches_from(group, templates, "urn:lt1") == []
    assert [n.replaces for n in _launches_from(group, templates, "urn:lt2")] == ["all"]
    # Two beside it and no id or dependency to tell them apart: only the group's own inputs are judged.
    twins = [_template(urn="urn:lt1", ident=UNKNOWN), _template(urn="urn:lt2", ident=UNKNOWN)]
    assert _launches_from(group, twins, "urn:lt2") == []


def _refreshing(**preferences):
    group = _group(skip=False, protect=False)
    group.props["instanceRefresh"]["preferences"] = preferences
    return group


def test_the_pace_says_each_preference_and_the_services_defaults():
    """Auto Scaling's defaults where the group sets none: 90 % healthy, 100 % at most, an hour's pause
    at each checkpoint."""
    effect = _nodes([_refreshing(), _template()], [_refreshing(), _template(image=NEW_IMAGE)])
    assert effect.pace is None and effect.summary().startswith("an instance refresh replaces every node; ")
    set_out = _refreshing(
        minHealthyPercentage=50,
        maxHealthyPercentage=150,
        checkpointPercentages=[25, 100],
        checkpointDelay=600,
        instanceWarmup=300,
    )
    assert _nodes([set_out, _template()], [set_out, _template(image=NEW_IMAGE)]).pace == (
        "at least 50% healthy, at most 150%, pausing 600 s after 25%, 100%, 300 s warm-up each"
    )
    defaults = _refreshing(checkpointPercentages=[50], instanceWarmup=0)
    assert _nodes([defaults, _template()], [defaults, _template(image=NEW_IMAGE)]).pace == (
        "at least 90% healthy, at most 100%, pausing 3600 s after 50%, 0 s warm-up each"
    )


def test_removed_types_are_each_named_and_a_malformed_override_ignored():
    base = _group(types=("g6.xlarge", "g5.xlarge", "g6e.xlarge"))
    head = _group(types=("g6.xlarge",))
    head.props["mixedInstancesPolicy"]["launchTemplate"]["overrides"].append(UNKNOWN)  # a preview's unknown entry
    nodes = _nodes([base, _template()], [head, _template()])
    assert nodes.types == ("g5.xlarge", "g6e.xlarge")
    assert "g5.xlarge, g6e.xlarge no longer listed" in nodes.reasons
    assert nodes.summary().startswith("an instance refresh replaces the nodes of type g5.xlarge, g6e.xlarge only")


def _group_changed(base_props: dict, head_props: dict, refresh: dict | None = None):
    base, head = _group(), _group()
    for group, props in ((base, base_props), (head, head_props)):
        group.props.update(props)
        if refresh is not None:
            group.props["instanceRefresh"] = refresh
    return _nodes([base, _template()], [head, _template()])


def test_only_the_policy_the_template_or_a_trigger_starts_a_refresh():
    """Auto Scaling refreshes on a new launch template or mixed instances policy; the provider also on a
    change of any property its `triggers` name; nothing else (a new maximum size is applied in place)."""
    assert not _group_changed({"maxSize": 4}, {"maxSize": 8}).refresh
    assert _group_changed({"launchTemplate": None}, {"launchTemplate": {"id": "lt-1"}}).refresh
    assert _group_changed({"launchTemplate": {"version": "1"}}, {"launchTemplate": {"version": "2"}}).refresh
    triggered = {"strategy": "Rolling", "triggers": ["tags"], "preferences": {"minHealthyPercentage": 90}}
    assert _group_changed({"tags": [{"key": "a"}]}, {"tags": [{"key": "b"}]}, triggered).refresh
    assert _group_changed({"tag": {"a": "1"}}, {"tag": {"a": "2"}}, {**triggered, "triggers": ["tag"]}).refresh
    assert not _group_changed({"tagsAll": 1}, {"tagsAll": 2}, {**triggered, "triggers": ["tags"]}).refresh
    # No refresh settings: the provider starts none, whatever changes.
    assert not _group_changed({"maxSize": 4}, {"maxSize": 8}, {}).refresh
    assert not _nodes(
        [_group(100), _template()], [replace(_group(30), props={**_group(30).props, "instanceRefresh": None})]
    ).refresh


def test_newly_set_protection_says_the_running_nodes_stay_unprotected():
    nodes = _nodes([_group(protect=False), _template()], [_group(), _template()])
    assert any(r.startswith("nodes running now stay unprotected") for r in nodes.reasons)
    assert not any("stay unprotected" in r for r in _nodes([_group(), _template()], [_group(30), _template()]).reasons)


def test_protection_is_judged_only_when_a_refresh_would_replace_nodes():
    """Wait (Auto Scaling's default when the group says nothing) makes a refresh that would replace nodes
    replace none; a refresh that replaces none anyway, or no refresh, has nothing to say about it."""
    from components.plan.diff import replaced_nodes

    unset = _group()
    del unset.props["instanceRefresh"]["preferences"]["scaleInProtectedInstances"]
    unset.props["instanceRefresh"]["preferences"]["skipMatching"] = False
    nodes = _nodes([unset, _template()], [unset, _template(image=NEW_IMAGE)])
    assert nodes.replaces == "none" and nodes.reasons[-1].endswith("scaleInProtectedInstances is Wait")
    waiting = _nodes([_group(100, protected="Wait"), _template()], [_group(30, protected="Wait"), _template()])
    assert waiting.refresh and waiting.replaces == "none"
    assert not any("nothing is replaced" in r for r in waiting.reasons)
    quiet = _group_changed(
        {"maxSize": 4, "protectFromScaleIn": True},
        {"maxSize": 8, "protectFromScaleIn": True},
        {"strategy": "Rolling", "preferences": {"scaleInProtectedInstances": "Wait"}},
    )
    assert not quiet.refresh and quiet.reasons == ()
    changes = plan_diff([_group(100), _template()], [_group(30), _template()])
    assert replaced_nodes(changes) == []
    assert [
        g for g, _ in replaced_nodes(plan_diff([_group(), _template()], [_group(), _template(image=NEW_IMAGE)]))
    ] == ["batch-asg"]


def test_changed_paths_are_dotted_sorted_and_lists_compare_whole():
    from components.plan.diff import changed_paths

    old = {"b": {"y": 1, "x": [1, 2]}, "a": 1, "same": {"k": "v"}}
    new = {"b": {"y": 2, "x": [1, 2, 3]}, "a": 1, "same": {"k": "v"}, "c": {"z": 0}}
    assert changed_paths(old, new) == ["b.x", "b.y", "c"]
    # Unknown on both sides (whatever kind the engine gave it) is no change; known to unknown is one.
    assert changed_paths({"v": UNKNOWN}, {"v": "(unknown)"}) == []
    assert changed_paths({"v": "a"}, {"v": UNKNOWN}) == ["v"] and changed_paths({"v": UNKNOWN}, {"v": "a"}) == ["v"]


def test_a_replaced_or_deleted_group_says_exactly_what_happens_to_its_nodes():
    from components.plan.diff import NodeEffect, replaced_nodes

    renamed = _group()
    renamed.props["name"] = "batch-asg-2"  # the provider replaces a group on a new name
    [change] = plan_diff([_group(), _template()], [renamed, _template()])
    assert change.action == "replace" and change.replaced_by == ("name",)
    assert change.nodes == NodeEffect(False, "all", (), ("the group itself is replaced",), None)
    assert [group for group, _ in replaced_nodes([change])] == ["batch-asg"]
    [gone] = plan_diff([_group(), _template()], [_template()])
    assert gone.nodes == NodeEffect(False, "all", (), ("the group is deleted: every node of it is terminated",), None)


def test_a_creation_does_not_hide_the_changes_after_it():
    volume = PlanResource("urn:v", "aws:ebs/volume:Volume", "ckpt", {"size": 64})
    grown = PlanResource("urn:v", "aws:ebs/volume:Volume", "ckpt", {"size": 128})
    queue = PlanResource("urn:q", "aws:sqs/queue:Queue", "events", {})
    assert [(c.action, c.resource.urn) for c in plan_diff([volume], [queue, grown])] == [
        ("create", "urn:q"),
        ("update", "urn:v"),
    ]


def test_a_group_moved_to_another_template_resource_is_another_template():
    """Ids unknown (a preview), the templates told apart by what the group depends on."""
    first, second = (_template(urn=u, ident=UNKNOWN, parent=None) for u in ("urn:lt1", "urn:lt2"))
    base = replace(_group(template_id=UNKNOWN), dependencies=("urn:lt1",))
    head = replace(
        _group(template_id=UNKNOWN, types=("g6.xlarge", "g5.xlarge", "g6e.xlarge")), dependencies=("urn:lt2",)
    )
    nodes = _nodes([base, first, second], [head, first, second])
    assert nodes.replaces == "all" and nodes.reasons[0] == "another launch template"


def test_a_group_whose_template_is_not_in_the_plans_is_judged_on_its_own_inputs():
    base, head = _group(template_id=UNKNOWN), _group(template_id=UNKNOWN)
    head.props["maxSize"] = 8
    nodes = _nodes([base], [head])
    assert not nodes.refresh and nodes.replaces == "none" and nodes.reasons == ()


def test_newly_set_protection_is_said_whole():
    nodes = _nodes([_group(protect=False), _template()], [_group(), _template()])
    assert (
        "nodes running now stay unprotected from the group's scale-in until replaced (the setting applies to "
        "launches; docs/day-two.md protects them once)"
    ) in nodes.reasons


def test_helm_releases_are_replaced_on_a_new_name_or_namespace_only():
    release = "kubernetes:helm.sh/v3:Release"
    assert replaced_by(release, ["name", "values.replicas", "namespace", "version"]) == ["name", "namespace"]
    assert replaced_by(release, ["values.name"]) == []


def test_only_kubernetes_objects_have_changes_the_api_server_refuses():
    from components.plan.replacement import refused_changes

    assert refused_changes("kubernetes:storage.k8s.io/v1:StorageClass", ["volumeBindingMode", "parameters.type"]) == [
        "volumeBindingMode"
    ]
    assert refused_changes("aws:ebs/volume:Volume", ["volumeBindingMode", "value"]) == []


def test_a_masked_secret_is_not_compared_and_the_diff_says_so():
    """A plan file written without --show-secrets holds `[secret]` where the head holds the value: that is
    no change (the value is unknown), and the diff says what it could not compare."""
    from components.plan.diff import masked_note

    key = PlanResource(urn="urn:key", type="tls:index/privateKey:PrivateKey", name="ca", props={"pem": "[secret]"})
    revealed = replace(key, props={"pem": "-----BEGIN PRIVATE KEY-----"})
    assert plan_diff([key], [revealed]) == []
    assert masked_note([key], [revealed]) and masked_note([revealed], [revealed]) == []
    rotated = replace(revealed, props={"pem": "-----BEGIN PRIVATE KEY----- 2"})
    assert [c.properties for c in plan_diff([revealed], [rotated])] == [("pem",)]
