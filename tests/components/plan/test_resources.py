"""How plan values read: unknowns by any of the engine's sentinels, masked secrets at any depth, the wire's
secret wrappers unwrapped, and tags from a map or an Auto Scaling group's list."""

from components.plan.resources import MASK, PlanResource, holds_masked, is_unknown, reveal_secrets, tags_of

SECRET = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": "s3cret"}


def test_unknown_is_any_engine_sentinel_or_the_plan_files_spelling():
    assert is_unknown("04da6b54-80e4-46f7-96ec-b56ff0331ba9") and is_unknown("(unknown)")
    assert not is_unknown("unknown") and not is_unknown(None) and not is_unknown(["(unknown)"])


def test_a_mask_is_found_at_any_depth_and_only_as_a_whole_value():
    assert holds_masked({"a": [{"b": MASK}]}) and holds_masked([MASK])
    assert not holds_masked({"a": "[secret] and more"}) and not holds_masked({"key": {"value": 1}})


def test_secret_wrappers_are_unwrapped_where_they_are():
    assert reveal_secrets({"tags": SECRET, "list": [SECRET, 1]}) == {"tags": "s3cret", "list": ["s3cret", 1]}


def test_tags_read_from_a_map_or_a_groups_list():
    group = PlanResource("urn:g", "aws:autoscaling/group:Group", "g", {"tags": [{"key": "team", "value": "ml"}, 7]})
    bucket = PlanResource("urn:b", "aws:s3/bucket:Bucket", "b", {"tags": {"team": "ml"}})
    assert tags_of(group) == {"team": "ml"} == tags_of(bucket)
    assert tags_of(PlanResource("urn:x", "aws:s3/bucket:Bucket", "x", {})) is None
