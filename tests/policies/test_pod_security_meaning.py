"""Pods judged by the Pod Security Standards: every generated spelling of a pod that breaks a control of
its namespace's level, in every kind that carries a pod, fails; every spelling of a compliant pod passes
(kubernetes-pod-enforce-pod-security-standards over policies/readers/pods.py)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from components.plan.resources import POD_CARRIERS
from policies.framework import run_rules
from policies.readers.pods import normal_path, violations
from policies.rules.kubernetes_pod_enforce_pod_security_standards import RULE
from tests.policies.spellings import resource

CONFIG = {
    "namespace_levels": {
        "serving": "restricted",
        "team": "baseline",
        "agents": "privileged",
        "kube-system": "baseline",
    },
    "default_level": "restricted",
    "exemptions": [{"namespace": "kube-system", "workload": "disks", "host_paths": ["/mnt/k8s-disks"]}],
}


def carrier(kind: str, name: str, namespace: str, pod: dict, annotations: dict | None = None) -> object:
    template = {"metadata": {"annotations": annotations or {}}, "spec": pod}
    spec = {"Pod": pod, "CronJob": {"jobTemplate": {"spec": {"template": template}}}}.get(
        kind.rsplit(":", 1)[-1], {"template": template}
    )
    metadata = {"name": name, "namespace": namespace, **({"annotations": annotations} if kind.endswith(":Pod") else {})}
    return resource(kind, {"metadata": metadata, "spec": spec}, name=name)


def findings(kind, name, namespace, pod, annotations=None):
    return run_rules(
        [RULE],
        [carrier(kind, name, namespace, pod, annotations)],
        {RULE.name: {"enforcementLevel": "mandatory", **CONFIG}},
    )


@st.composite
def restricted_pod(draw) -> dict:
    """A pod restricted allows, its settings at the pod's level or each container's."""
    at_pod = draw(st.booleans())
    container: dict[str, Any] = {
        "name": "c",
        "image": "i:1",
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"], **draw(st.sampled_from([{}, {"add": ["NET_BIND_SERVICE"]}]))},
        },
    }
    pod: dict[str, Any] = {"containers": [container]}
    settings_ = {
        "runAsNonRoot": True,
        "seccompProfile": {"type": draw(st.sampled_from(["RuntimeDefault", "Localhost"]))},
        **draw(st.sampled_from([{}, {"runAsUser": 1000}, {"runAsUser": 1000.0}])),
    }
    if at_pod:
        pod["securityContext"] = settings_
    else:
        container["securityContext"].update(settings_)
    if draw(st.booleans()):
        pod["volumes"] = [
            {
                "name": "v",
                draw(
                    st.sampled_from(["emptyDir", "configMap", "secret", "projected", "persistentVolumeClaim", "csi"])
                ): {},
            }
        ]
    return pod


HOST_PATHS = [
    "/",
    "/var",
    "/opt/cni/bin",
    "/./etc",
    "//etc/",
    "/var/run/containerd",
    "/mnt/k8s-disks/../../etc",
    "/proc",
    "/mnt/k8s-disks/..",
]


@st.composite
def baseline_breach(draw) -> tuple[dict, dict | None]:
    """A restricted pod with one baseline control broken, in one of its spellings; and any annotations."""
    pod = copy.deepcopy(draw(restricted_pod()))
    container = pod["containers"][0]
    if draw(st.booleans()):  # the same breach in an init or ephemeral container
        field = draw(st.sampled_from(["initContainers", "ephemeralContainers"]))
        container = copy.deepcopy(container) | {"name": "side"}
        pod[field] = [container]
    context = container["securityContext"]
    breach = draw(
        st.sampled_from(
            [
                "privileged",
                "host-namespace",
                "host-path",
                "host-port",
                "capability",
                "seccomp",
                "proc-mount",
                "apparmor",
                "apparmor-annotation",
                "selinux",
                "sysctl",
                "host-process",
                "host-probe",
            ]
        )
    )
    annotations = None
    if breach == "privileged":
        context["privileged"] = draw(st.sampled_from([True, "true", "True"]))
    elif breach == "host-namespace":
        pod[draw(st.sampled_from(["hostNetwork", "hostPID", "hostIPC"]))] = True
    elif breach == "host-path":
        pod.setdefault("volumes", []).append({"name": "host", "hostPath": {"path": draw(st.sampled_from(HOST_PATHS))}})
    elif breach == "host-port":
        container["ports"] = [{"containerPort": 80, "hostPort": draw(st.sampled_from([80, 8080.0, "9100"]))}]
    elif breach == "capability":
        context["capabilities"]["add"] = [
            draw(st.sampled_from(["SYS_ADMIN", "NET_ADMIN", "ALL", "sys_admin", "CAP_SYS_ADMIN", "BPF", "NET_RAW"]))
        ]
    elif breach == "seccomp":
        target = pod.setdefault("securityContext", {}) if draw(st.booleans()) else context
        target["seccompProfile"] = {"type": "Unconfined"}
        if target is not context:
            context.pop("seccompProfile", None)
    elif breach == "proc-mount":
        context["procMount"] = "Unmasked"
    elif breach == "apparmor":
        context["appArmorProfile"] = {"type": "Unconfined"}
    elif breach == "apparmor-annotation":
        annotations = {"container.apparmor.security.beta.kubernetes.io/c": "unconfined"}
    elif breach == "selinux":
        context["seLinuxOptions"] = draw(
            st.sampled_from([{"type": "spc_t"}, {"user": "system_u"}, {"role": "sysadm_r"}])
        )
    elif breach == "sysctl":
        pod.setdefault("securityContext", {})["sysctls"] = [
            {
                "name": draw(st.sampled_from(["kernel.msgmax", "net.core.somaxconn", "vm.overcommit_memory"])),
                "value": "1",
            }
        ]
    elif breach == "host-probe":
        handler = draw(
            st.sampled_from(
                [
                    {"httpGet": {"path": "/", "port": 80, "host": "169.254.169.254"}},
                    {"tcpSocket": {"port": 22, "host": "10.0.0.1"}},
                ]
            )
        )
        if draw(st.booleans()):
            container[draw(st.sampled_from(["livenessProbe", "readinessProbe", "startupProbe"]))] = handler
        else:
            container["lifecycle"] = {draw(st.sampled_from(["postStart", "preStop"])): handler}
    else:
        target = pod.setdefault("securityContext", {}) if draw(st.booleans()) else context
        target["windowsOptions"] = {"hostProcess": True}
    return pod, annotations


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(POD_CARRIERS),
    st.sampled_from([("serving", "app"), ("team", "app"), ("kube-system", "disks"), ("elsewhere", "app")]),
    baseline_breach(),
)
def test_every_spelling_of_a_baseline_breach_fails_in_every_kind_and_namespace_that_is_not_privileged(
    kind, where, breach
):
    namespace, name = where
    pod, annotations = breach
    assert findings(kind, name, namespace, pod, annotations), (kind, namespace, pod, annotations)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(POD_CARRIERS), restricted_pod(), st.sampled_from(["serving", "team", "elsewhere", "agents"]))
def test_every_spelling_of_a_restricted_pod_passes_everywhere(kind, pod, namespace):
    assert findings(kind, "app", namespace, pod) == []


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(POD_CARRIERS),
    restricted_pod(),
    st.sampled_from(
        [
            ("allowPrivilegeEscalation", True),
            ("runAsNonRoot", False),
            ("runAsUser", 0),
            ("capabilities", {"drop": []}),
            ("capabilities", {"drop": ["ALL"], "add": ["CHOWN"]}),
            ("seccompProfile", {"type": "Unconfined"}),
        ]
    ),
)
def test_a_restricted_breach_fails_in_a_restricted_namespace_and_passes_in_a_baseline_one(kind, pod, breach):
    pod = copy.deepcopy(pod)
    key, value = breach
    pod.pop("securityContext", None)
    context = pod["containers"][0]["securityContext"]
    context.update({"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}, key: value})
    assert findings(kind, "app", "serving", pod)
    assert bool(findings(kind, "app", "team", pod)) is (key == "seccompProfile")  # Unconfined breaks baseline too


def test_a_privileged_namespace_allows_its_charts_agents_what_they_need_and_an_exemption_only_its_own_path():
    """Privileged is the level of what the gate renders from the namespace's release; a pod declared there
    (anyone's DaemonSet beside the device plugin) meets baseline."""
    agent = {
        "hostNetwork": True,
        "volumes": [{"name": "h", "hostPath": {"path": "/var/lib/kubelet/device-plugins"}}],
        "containers": [{"name": "c", "image": "i:1", "securityContext": {"privileged": True}}],
    }
    rendered = run_rules(
        [RULE],
        [carrier("kubernetes:apps/v1:DaemonSet", "agent", "agents", agent)],
        {RULE.name: {"enforcementLevel": "mandatory", **CONFIG, "rendered": True}},
    )
    assert rendered == []
    declared = findings("kubernetes:apps/v1:DaemonSet", "agent", "agents", agent)
    assert len(declared) >= 3 and all("privileged for its chart's pods only" in v.message for v in declared)
    disks = {
        "volumes": [{"name": "h", "hostPath": {"path": "/mnt/k8s-disks/"}}],
        "containers": [{"name": "c", "image": "i"}],
    }
    assert findings("kubernetes:apps/v1:DaemonSet", "disks", "kube-system", disks) == []
    assert findings("kubernetes:apps/v1:DaemonSet", "other", "kube-system", disks)


def test_an_exemption_of_capabilities_alone_lets_its_workload_add_them_and_no_other():
    config = {**CONFIG, "exemptions": [{"namespace": "team", "workload": "cni", "capabilities": ["NET_ADMIN"]}]}
    pod = {"containers": [{"name": "c", "image": "i", "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}}}]}

    def judged(name):
        return run_rules(
            [RULE],
            [carrier("kubernetes:apps/v1:DaemonSet", name, "team", pod)],
            {RULE.name: {"enforcementLevel": "mandatory", **config}},
        )

    assert judged("cni") == [] and judged("other")


def test_an_exemption_lets_its_own_host_path_through_at_restricted_too():
    from policies.readers.pods import Exemption

    pod = {"volumes": [{"name": "h", "hostPath": {"path": "/mnt/k8s-disks"}}], "containers": [{"name": "c"}]}
    exemption = Exemption("serving", "disks", host_paths=frozenset({"/mnt/k8s-disks"}))
    assert "Volume Types" not in [f.control for f in violations(pod, "restricted", exemption=exemption)]
    assert "Volume Types" in [f.control for f in violations(pod, "restricted")]


@given(st.sampled_from(["/etc", "/./etc", "//etc", "/etc/", "/mnt/../etc", "/etc/."]))
def test_a_host_path_reads_as_the_kernel_resolves_it(path):
    assert normal_path(path) == "/etc"


def test_a_bare_container_breaks_exactly_the_four_restricted_controls_it_leaves_unset():
    assert [f.control for f in violations({"containers": [{"name": "c"}]}, "restricted")] == [
        "Privilege Escalation",
        "Running as Non-root",
        "Seccomp",
        "Capabilities",
    ]


def test_what_v1_35_allows_passes_image_volumes_new_sysctls_and_root_in_a_user_namespace_of_its_own():
    image = {
        "volumes": [{"name": "weights", "image": {"reference": "registry/weights:1"}}],
        "securityContext": {
            "runAsNonRoot": True,
            "seccompProfile": {"type": "RuntimeDefault"},
            "sysctls": [{"name": "net.ipv4.tcp_rmem", "value": "4096 87380 6291456"}],
        },
        "containers": [
            {"name": "c", "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}}
        ],
    }
    assert violations(image, "restricted") == []
    rooted = copy.deepcopy(image) | {"hostUsers": False}
    rooted["securityContext"] = {"runAsUser": 0, "seccompProfile": {"type": "RuntimeDefault"}}
    assert violations(rooted, "restricted") == []
    assert [f.control for f in violations(rooted | {"hostUsers": True}, "restricted")] == [
        "Running as Non-root user",
        "Running as Non-root",
    ]
    # Where the platform promises non-root (Triton's namespaces), a user namespace of its own excuses nothing.
    assert [f.control for f in violations(rooted, "restricted", root_in_own_users=False)] == [
        "Running as Non-root user",
        "Running as Non-root",
    ]


def test_triton_as_uid_0_in_its_own_user_namespace_fails_in_a_non_root_namespace_only():
    pod = {
        "hostUsers": False,
        "securityContext": {"runAsUser": 0, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [
            {
                "name": "triton",
                "image": "i:1",
                "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
            }
        ],
    }
    config = {**CONFIG, "non_root_namespaces": ["serving"]}
    judged = run_rules(
        [RULE],
        [carrier("kubernetes:apps/v1:Deployment", "triton", "serving", pod)],
        {RULE.name: {"enforcementLevel": "mandatory", **config}},
    )
    assert [v.message.split(": ", 1)[1] for v in judged] == [
        "Running as Non-root user: pod runs as UID 0 (namespace serving allows restricted)",
        "Running as Non-root: container triton does not set runAsNonRoot: true (pod or container) "
        "(namespace serving allows restricted)",
    ]
    assert (
        run_rules(
            [RULE],
            [carrier("kubernetes:apps/v1:Deployment", "triton", "serving", pod)],
            {RULE.name: {"enforcementLevel": "mandatory", **CONFIG}},
        )
        == []
    )


def test_the_apparmor_profiles_baseline_allows_pass_and_any_other_fails():
    """Pod Security Standards, baseline: the AppArmor annotation may be runtime/default or localhost/*."""
    from policies.readers.pods import APPARMOR_ANNOTATION, baseline

    def findings(value):
        return [
            f
            for f in baseline(
                {"containers": [{"name": "c", "image": "i"}]}, {"annotations": {f"{APPARMOR_ANNOTATION}c": value}}, None
            )
            if f.control == "AppArmor"
        ]

    assert findings("runtime/default") == [] and findings("localhost/my-profile") == []
    assert [f.detail for f in findings("unconfined")] == ["is unconfined"]


def test_each_finding_names_the_standards_control_for_sysctls_and_host_probes():
    from policies.readers.pods import baseline

    spec = {
        "securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "1"}]},
        "containers": [{"name": "c", "image": "i", "livenessProbe": {"httpGet": {"host": "10.0.0.1", "port": 80}}}],
    }
    found = {f.control: f.detail for f in baseline(spec, {}, None)}
    assert {"Sysctls", "Host Probes / Lifecycle Hooks"} <= set(found)
    assert found["Sysctls"] == "sets kernel.msgmax"
    selinux = {"containers": [{"name": "c", "image": "i", "securityContext": {"seLinuxOptions": {"user": "root"}}}]}
    assert [(f.control, f.detail) for f in baseline(selinux, {}, None)] == [
        ("SELinux", "sets SELinux options {'user': 'root'}")
    ]


def test_a_bare_pods_own_annotations_are_read():
    """A Pod has no template: its AppArmor annotation is in its own metadata."""
    from policies.readers.pods import APPARMOR_ANNOTATION, pod_metadata

    annotations = {f"{APPARMOR_ANNOTATION}c": "unconfined"}
    pod = resource(
        "kubernetes:core/v1:Pod",
        {"metadata": {"annotations": annotations}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
    )
    assert pod_metadata(pod) == {"annotations": annotations}
    assert pod_metadata(resource("kubernetes:core/v1:Pod", {"spec": {}})) == {}


def test_a_templates_owner_lends_its_pods_no_annotations():
    """A Deployment's own annotations are not its pods': with no template metadata, its pods have none."""
    from policies.readers.pods import APPARMOR_ANNOTATION, pod_metadata

    own = {"annotations": {f"{APPARMOR_ANNOTATION}c": "unconfined"}}
    deployment = resource(
        "kubernetes:apps/v1:Deployment",
        {"metadata": own, "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}},
    )
    assert pod_metadata(deployment) == {}


def test_a_proc_mount_finding_names_the_mount_type():
    spec = {
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [
            {
                "name": "c",
                "image": "i",
                "securityContext": {
                    "procMount": "Unmasked",
                    "allowPrivilegeEscalation": False,
                    "capabilities": {"drop": ["ALL"]},
                },
            }
        ],
    }
    assert sorted(f.detail for f in violations(spec, "restricted") if f.control == "/proc Mount Type") == [
        "mounts /proc Unmasked",
        "mounts /proc Unmasked (restricted: Default)",
    ]  # baseline's and restricted's
    # In a user namespace of its own, baseline lets an unmasked /proc be; restricted still does not.
    assert [
        f.detail for f in violations(spec | {"hostUsers": False}, "restricted") if f.control == "/proc Mount Type"
    ] == ["mounts /proc Unmasked (restricted: Default)"]


def test_a_proc_mount_spelled_default_passes():
    spec = {
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [
            {
                "name": "c",
                "image": "i",
                "securityContext": {
                    "procMount": "Default",
                    "allowPrivilegeEscalation": False,
                    "capabilities": {"drop": ["ALL"]},
                },
            }
        ],
    }
    assert violations(spec, "restricted") == []


def test_a_windows_host_process_is_named_by_its_control():
    from policies.readers.pods import baseline

    spec = {"securityContext": {"windowsOptions": {"hostProcess": True}}, "containers": [{"name": "c", "image": "i"}]}
    assert [(f.control, f.detail) for f in baseline(spec, {}, None)] == [
        ("HostProcess", "runs as a Windows host process")
    ]
    spec = {"containers": [{"name": "c", "image": "i", "securityContext": {"windowsOptions": {"hostProcess": True}}}]}
    assert [(f.control, f.where, f.detail) for f in baseline(spec, {}, None)] == [
        ("HostProcess", "container c", "runs as a Windows host process")
    ]


def test_a_cronjobs_pods_are_judged_by_its_job_templates_annotations():
    """A CronJob's pods take their metadata from jobTemplate.spec.template, not from the CronJob's own."""
    pod = {"containers": [{"name": "c", "image": "i"}]}
    found = findings(
        "kubernetes:batch/v1:CronJob",
        "nightly",
        "team",
        pod,
        {"container.apparmor.security.beta.kubernetes.io/c": "unconfined"},
    )
    assert [v.message.split(": ")[1] for v in found] == ["AppArmor"]


def test_an_apparmor_profile_field_baseline_forbids_is_named_as_the_apparmor_control():
    from policies.readers.pods import baseline

    for spec in (
        {"securityContext": {"appArmorProfile": {"type": "Unconfined"}}, "containers": [{"name": "c"}]},
        {"containers": [{"name": "c", "securityContext": {"appArmorProfile": {"type": "Unconfined"}}}]},
    ):
        assert [(f.control, f.detail) for f in baseline(spec, {}, None)] == [("AppArmor", "sets AppArmor Unconfined")]
    allowed = {"containers": [{"name": "c", "securityContext": {"appArmorProfile": {"type": "Localhost"}}}]}
    assert list(baseline(allowed, {}, None)) == []
