"""Day two: the prod stack applied at its Kubernetes minor (1.35), then the control plane replaced at the next
minor (1.36) on the same etcd, as an EKS version upgrade does. Every object is still served, a second apply of
the same objects changes nothing (no field the newer server defaults differently), and every admission policy
still type-checks and still denies what it denied."""

from __future__ import annotations

from components.tenancy.manifests import TENANT_ROLE
from tests.conftest import _stack_plan
from tests.engines.cluster import DEPLOYER, control_plane, restart_at
from tests.engines.stack_objects import POLICY, apply_stack, object_key, team_people, type_checked
from tests.infra.test_tenant_isolation import _service
from tests.k8s_checks import declared_manifests
from tests.stacks import stack_config

# Annotations the volume controllers write on a claim when they bind it (kubernetes
# pkg/controller/volume/persistentvolume: `pv.kubernetes.io/bind-completed`, `.../bound-by-controller`; the
# provisioner's `volume.kubernetes.io/...`): the binder may finish between two reads of a claim.
CONTROLLER_ANNOTATIONS = ("pv.kubernetes.io/", "volume.kubernetes.io/", "volume.beta.kubernetes.io/")


def _declared(obj: dict | None) -> dict | None:
    """An object as stored, less what controllers and field managers write beside it."""
    if obj is None:
        return None
    kept = {key: value for key, value in obj.items() if key != "status"}
    kept["metadata"] = {k: v for k, v in obj["metadata"].items() if k not in ("resourceVersion", "managedFields")}
    annotations = kept["metadata"].get("annotations")
    if annotations:
        kept["metadata"]["annotations"] = {
            k: v for k, v in annotations.items() if not k.startswith(CONTROLLER_ANNOTATIONS)
        }
    return kept


def _declared_state(kube, manifests) -> dict:
    return {
        object_key(m): _declared(
            kube.get(m["apiVersion"], m["kind"], m["metadata"]["name"], namespace=m["metadata"].get("namespace"))
        )
        for m in manifests
    }


def test_the_prod_stack_survives_a_kubernetes_version_step(engine_dir):
    config = stack_config("prod")
    assert config.cluster.kubernetes_version == "1.35"
    plan = _stack_plan("prod")
    manifests = declared_manifests(plan)
    with control_plane(engine_dir / "version-step", "1.35") as plane:
        assert apply_stack(plane, plan, config).refused() == {}
        before = _declared_state(plane.kube, manifests)
        stepped = restart_at(plane, "1.36")
        try:
            assert stepped.kube.get_raw("/version").count('"minor": "36"') == 1
            assert _declared_state(stepped.kube, manifests) == before
            # A second apply of the same objects changes no field the objects declare.
            for manifest in manifests:
                meta = manifest["metadata"]
                live = stepped.kube.get(
                    manifest["apiVersion"], manifest["kind"], meta["name"], namespace=meta.get("namespace")
                )
                answer = stepped.kube.apply(manifest, identity=DEPLOYER)
                assert answer.allowed, f"{object_key(manifest)}: {answer.message}"
                assert _declared(answer.body) == _declared(live), f"{object_key(manifest)} changed"
            for policy in stepped.kube.list(*POLICY):
                warnings = type_checked(stepped.kube, policy["metadata"]["name"], 60)["typeChecking"]
                assert not warnings.get("expressionWarnings"), policy["metadata"]["name"]
            balancer = stepped.kube.create(
                _service(type="LoadBalancer"), identity=team_people("video-ml"), dry_run=True
            )
            assert balancer.denied_by(f"{TENANT_ROLE}-services"), balancer.message
        finally:
            stepped.stop()
