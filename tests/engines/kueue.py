"""Kueue's own controller (engines/kueue, built from its module at the chart's version) against an engine tests'
control plane, configured as the platform configures it (components/tenancy/queues.py) with what only a
pod would have given it:

- its certificate: Kueue's internal certificate management writes it to its Secret, and the kubelet would mount
  that Secret where the webhook server reads it; here the certificate is copied there once written;
- its webhooks: `running_kueue` alone holds none (the webhook configurations it injects its CA into are
  empty): jobs are created suspended, as its mutating webhook would make them, and its own objects are judged by
  their CRDs' schemas only. `kueue_playing_its_pods` serves them: under a release of the platform's chart, it
  plays the chart's pods (tests/engines/cluster.py PLAYED_BY_HOST) at this host's address on the chart's port,
  and the API server calls the chart's webhooks, failing closed, there;
- its identity: playing the chart's pods, the chart's service account, with only what the chart's RBAC grants it
  (the platform's admission policies let that identity alone start a team's queued Job); alone, the admin's;
- the visibility API (an aggregated API server behind a Service) is off.

Admission, borrowing, preemption and all-or-nothing waiting are the controller's own, unchanged."""

from __future__ import annotations

import base64
import contextlib
import ipaddress
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import requests
import yaml

from components.tenancy.config import QueuesConfig
from components.tenancy.queues import (
    KUEUE_CONTROLLER,
    KUEUE_NAMESPACE,
    KUEUE_WEBHOOK_PORT,
    kueue_configuration,
    kueue_values,
)
from tests.engines.cluster import (
    PLAYED_AT,
    PLAYED_NAME_LABEL,
    ControlPlane,
    EnginesMissing,
    _kubeconfig_file,
    _start,
    engine_manifest,
    free_port,
    host_address,
)

SECRET = "kueue-webhook-server-cert"
# What the API server gives a pod's service account token in Kueue's namespace.
SERVICE_ACCOUNT_GROUPS = ("system:serviceaccounts", f"system:serviceaccounts:{KUEUE_NAMESPACE}", "system:authenticated")
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


def _configuration(config: QueuesConfig, folder: Path, webhook: tuple[str, int]) -> tuple[dict, int]:
    health = free_port()
    configured = kueue_configuration(config)
    host, port = webhook
    configured |= {
        "namespace": KUEUE_NAMESPACE,
        "health": {"healthProbeBindAddress": f"127.0.0.1:{health}"},
        "metrics": {"bindAddress": "0"},
        "webhook": {"port": port, "host": host, "certDir": str(folder / "certs")},
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
def running_kueue(
    plane: ControlPlane, folder: Path, config: QueuesConfig, *, serving: tuple[str, int] | None = None
) -> Iterator[None]:
    """Kueue's controller on the plane (its CRDs already applied), stopped on exit: with `serving`, its webhooks
    at that address, for the ones a release of its chart declared; without, none."""
    binary = kueue_binary()
    folder.mkdir(parents=True, exist_ok=True)
    if serving is None:
        _prepare(plane)
    configured, health = _configuration(config, folder, serving or ("127.0.0.1", free_port()))
    config_file = folder / "kueue-config.yaml"
    config_file.write_text(yaml.safe_dump(configured))
    kubeconfig = (
        _kubeconfig_file(plane, "kueue", KUEUE_CONTROLLER, groups=SERVICE_ACCOUNT_GROUPS)
        if serving
        else _kubeconfig_file(plane, "kueue", "kueue-controller", groups=("system:masters",))
    )
    # The platform's feature gates (its chart values), and the visibility API off (nothing here serves it).
    gates = [
        f"{g['name']}={str(g['enabled']).lower()}"
        for g in kueue_values(config, provisioning=False)["controllerManager"]["featureGates"]
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


def _played_pods(plane: ControlPlane) -> list[dict]:
    pods = plane.kube.list("v1", "Pod", namespace=KUEUE_NAMESPACE)
    return [p for p in pods if p["metadata"].get("labels", {}).get(PLAYED_NAME_LABEL) == "kueue"]


def _play(plane: ControlPlane, address: str) -> None:
    for pod in _played_pods(plane):
        if pod["metadata"].get("annotations", {}).get(PLAYED_AT) != address:
            patch = {"metadata": {"annotations": {PLAYED_AT: address}}}
            plane.kube.patch("v1", "Pod", pod["metadata"]["name"], patch, namespace=KUEUE_NAMESPACE)


@contextlib.contextmanager
def kueue_playing_its_pods(plane: ControlPlane, folder: Path, config: QueuesConfig) -> Iterator[None]:
    """While a test runs `pulumi up` of a stack with queues: once the release of Kueue's chart has made its pods,
    Kueue's controller starts serving the chart's webhooks at this host's address, and each pod of the chart's
    Deployment is then made ready there, as the pod's readiness probe waits for Kueue's (so the release, and the
    program's queues after it, wait for webhooks that answer)."""
    stop, failure = threading.Event(), []
    address = host_address()
    if ipaddress.ip_address(address).is_loopback:
        raise EnginesMissing("this host has no address but loopback: the API server cannot call a webhook here")

    def play() -> None:
        try:
            while not _played_pods(plane):
                if stop.wait(0.5):
                    return
            with running_kueue(plane, folder, config, serving=(address, KUEUE_WEBHOOK_PORT)):
                while not stop.wait(0.5):
                    # A test may restart the API server under it (a version step), as Kueue's pods outlive one.
                    with contextlib.suppress(requests.ConnectionError):
                        _play(plane, address)
        except Exception as error:  # the test that waits on the release says so; this names why
            failure.append(error)

    player = threading.Thread(target=play, name="kueue-player", daemon=True)
    player.start()
    try:
        yield
    finally:
        stop.set()
        player.join(timeout=60)
        if failure:
            raise AssertionError(f"Kueue could not play its chart's pods: {failure[0]}") from failure[0]
