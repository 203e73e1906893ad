"""Kueue's own controller (engines/kueue, built from its module at the chart's version) against an engine tests'
control plane, configured as the platform configures it (components/tenancy/queues.py) with what only a
pod would have given it:

- its certificate: Kueue's internal certificate management writes it to its Secret, and the kubelet would mount
  that Secret where the webhook server reads it; here the certificate is copied there once written;
- its webhooks: the API server here cannot reach a process on this host through a Service (no pod network), so
  the webhook configurations it injects its CA into hold no webhook; jobs are therefore created suspended, as
  Kueue's mutating webhook would make them, and its own objects are judged by their CRDs' schemas only;
- its identity: the admin's (the chart's ClusterRole is the gate's to judge: `CHART_GRANTS`);
- the visibility API (an aggregated API server behind a Service, like the webhooks) is off.

Admission, borrowing, preemption and all-or-nothing waiting are the controller's own, unchanged."""

from __future__ import annotations

import base64
import contextlib
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import yaml

from components.tenancy.config import QueuesConfig
from components.tenancy.queues import KUEUE_NAMESPACE, kueue_configuration, kueue_values
from tests.engines.cluster import ControlPlane, EnginesMissing, _kubeconfig_file, _start, engine_manifest, free_port

SECRET = "kueue-webhook-server-cert"
SERVICE = "kueue-webhook-service"
WEBHOOKS = (
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "kueue-mutating-webhook-configuration"),
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "kueue-validating-webhook-configuration"),
)


def kueue_binary() -> str:
    engines = engine_manifest()
    if "kueue" not in engines:
        raise EnginesMissing("no Kueue engine in the manifest: run `make engines`")
    return engines["kueue"]["kueue"]


def _prepare(plane: ControlPlane) -> None:
    kube = plane.kube
    kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": KUEUE_NAMESPACE}})
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": SECRET, "namespace": KUEUE_NAMESPACE}}
    kube.apply(secret)
    for api_version, kind, name in WEBHOOKS:
        kube.apply({"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, "webhooks": []})


def _configuration(config: QueuesConfig, folder: Path) -> tuple[dict, int]:
    health = free_port()
    configured = kueue_configuration(config)
    configured |= {
        "namespace": KUEUE_NAMESPACE,
        "health": {"healthProbeBindAddress": f"127.0.0.1:{health}"},
        "metrics": {"bindAddress": "0"},
        "webhook": {"port": free_port(), "host": "127.0.0.1", "certDir": str(folder / "certs")},
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": True, "webhookServiceName": SERVICE, "webhookSecretName": SECRET},
    }
    return configured, health


def _mount_certificate(plane: ControlPlane, folder: Path, seconds: float) -> None:
    """What the kubelet does with the pod's secret volume: the Secret's files, once Kueue has written them."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        data = (plane.kube.get("v1", "Secret", SECRET, namespace=KUEUE_NAMESPACE) or {}).get("data") or {}
        if {"tls.crt", "tls.key"} <= set(data):
            certs = folder / "certs"
            certs.mkdir(parents=True, exist_ok=True)
            for name, value in data.items():
                (certs / name).write_bytes(base64.b64decode(value))
            return
        time.sleep(0.2)
    raise AssertionError("Kueue wrote no certificate to its Secret")


def _ready(port: int, process, log: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"kueue exited with {process.returncode}: {log.read_text(errors='replace')[-2000:]}")
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as answer:
                if answer.status == 200:
                    return
        time.sleep(0.3)
    raise AssertionError(f"kueue was not ready in {seconds:.0f} s: {log.read_text(errors='replace')[-2000:]}")


@contextlib.contextmanager
def running_kueue(plane: ControlPlane, folder: Path, config: QueuesConfig) -> Iterator[None]:
    """Kueue's controller on the plane (its CRDs already applied), stopped on exit."""
    binary = kueue_binary()
    folder.mkdir(parents=True, exist_ok=True)
    _prepare(plane)
    configured, health = _configuration(config, folder)
    config_file = folder / "kueue-config.yaml"
    config_file.write_text(yaml.safe_dump(configured))
    kubeconfig = _kubeconfig_file(plane, "kueue", "kueue-controller", groups=("system:masters",))
    # The platform's feature gates (its chart values), and the visibility API off (nothing here serves it).
    gates = [
        f"{g['name']}={str(g['enabled']).lower()}" for g in kueue_values(config)["controllerManager"]["featureGates"]
    ]
    process = _start(
        folder,
        "kueue",
        [
            binary,
            f"--config={config_file}",
            f"--feature-gates={','.join([*gates, 'VisibilityOnDemand=false'])}",
            f"--kubeconfig={kubeconfig}",
        ],
    )
    try:
        _mount_certificate(plane, folder, 60)
        _ready(health, process, folder / "kueue.log", 120)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except Exception:
            process.kill()
