"""The pod reader's search by shape: a pod spec is found wherever a kind keeps it, and only a pod spec."""

from policies.readers.pods import is_pod_spec, pod_specs_by_shape

POD = {"containers": [{"name": "c", "image": "busybox:1.36"}]}


def test_a_pod_spec_is_a_list_of_containers_each_naming_an_image():
    assert is_pod_spec(POD)
    assert not is_pod_spec({"containers": []})
    assert not is_pod_spec({"containers": [{"name": "c"}]})  # no image: not a container the kubelet runs
    assert not is_pod_spec({"containers": "c"})
    assert not is_pod_spec(["containers"])


def test_pods_are_found_at_any_depth_with_their_templates_metadata():
    spec = {
        "headGroupSpec": {"template": {"metadata": {"annotations": {"a": "b"}}, "spec": POD}},
        "workerGroupSpecs": [{"template": {"spec": POD}}, {"replicas": 2}],
        "replicaSpecs": {"Master": {"template": {"spec": {"initContainers": [], **POD}}}},
    }
    found = {path: metadata for path, _spec, metadata in pod_specs_by_shape(spec)}
    assert found == {
        "headGroupSpec.template.spec": {"annotations": {"a": "b"}},
        "workerGroupSpecs[0].template.spec": {},
        "replicaSpecs.Master.template.spec": {},
    }


def test_text_that_looks_like_a_pod_is_not_one():
    assert list(pod_specs_by_shape({"data": {"pod.yaml": "containers:\n- image: busybox\n"}})) == []
