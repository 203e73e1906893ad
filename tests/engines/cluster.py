"""A real Kubernetes control plane on 127.0.0.1 for the engine tests: etcd, kube-apiserver (authorization
Node,RBAC; admission with NodeRestriction and ValidatingAdmissionPolicy), kube-controller-manager (it writes
the policies' `status.typeChecking`, runs Deployments and binds volumes), kube-scheduler, and kwok, which
plays the kubelets of the nodes a test registers so that scheduled pods become ready.

The binaries come from `make engines` (engines/build.py), found through its manifest.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import ipaddress
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from tests.engines.authenticator import TokenWebhook
from tests.engines.kube import Identity, Kube

ROOT = Path(__file__).resolve().parents[2]
# The identity `pulumi up` runs as: cluster-admin, as EKS's access entry for the deployer makes it.
DEPLOYER = Identity("seedance-deployer", ("system:masters", "system:authenticated"))
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
# Pods that a process on this host plays instead of kwok (by their `app.kubernetes.io/name`): kwok holds them
# pending until a test annotates them with the address the process serves on, then makes them ready at that
# address, so their Service's endpoints, and the API server's calls to webhooks (routed to endpoints), reach it.
PLAYED_NAME_LABEL = "app.kubernetes.io/name"
PLAYED_BY_HOST = ("kueue",)
PLAYED_AT = "engine-tests.seedance.io/played-at"


class EnginesMissing(Exception):
    """`make engines` has not run: the message says so in one line."""


def engine_manifest() -> dict:
    path = Path(os.environ.get("SEEDANCE_ENGINE_MANIFEST") or ROOT / ".engines.json")
    if not path.is_file():
        raise EnginesMissing(f"no engine manifest at {path}: run `make engines` (needs Go 1.26)")
    return json.loads(path.read_text())["engines"]


def kubernetes_binaries(minor: str) -> dict[str, str]:
    engines = engine_manifest()
    name = f"kubernetes-{minor}"
    if name not in engines:
        raise EnginesMissing(f"no Kubernetes {minor} engine in the manifest (built: {', '.join(sorted(engines))})")
    return {
        **engines[name],
        "etcd": engines["etcd"]["etcd"],
        "kwok": engines["kwok"]["kwok"],
        "kwok-stages": engines["kwok"]["stages.yaml"],
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _pem(key) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


@dataclass
class Certificates:
    """A cluster CA, the server's certificate and client certificates signed by it."""

    folder: Path
    ca_key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "seedance-engine-tests-ca")])
        self.ca = self._sign(name, self.ca_key.public_key(), ca=True, issuer=name)
        self.ca_file = self._write("ca.crt", self.ca.public_bytes(serialization.Encoding.PEM))

    def _sign(
        self,
        subject: x509.Name,
        public_key,
        *,
        ca: bool = False,
        issuer: x509.Name | None = None,
        hosts: tuple[str, ...] = (),
        client: bool = False,
    ) -> x509.Certificate:
        now = datetime.datetime.now(datetime.UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(issuer or self.ca.subject)
            .public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if hosts:
            names = [x509.IPAddress(ipaddress.ip_address(h)) if h[0].isdigit() else x509.DNSName(h) for h in hosts]
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        if not ca:
            usage = x509.ExtendedKeyUsageOID.CLIENT_AUTH if client else x509.ExtendedKeyUsageOID.SERVER_AUTH
            builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        return builder.sign(self.ca_key, hashes.SHA256())

    def _write(self, name: str, data: bytes) -> Path:
        path = self.folder / name
        path.write_bytes(data)
        return path

    def issue(
        self, name: str, common_name: str, *, groups: tuple[str, ...] = (), hosts: tuple[str, ...] = ()
    ) -> tuple[Path, Path]:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name(
            [
                x509.NameAttribute(NameOID.COMMON_NAME, common_name),
                *(x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups),
            ]
        )
        certificate = self._sign(subject, key.public_key(), hosts=hosts, client=not hosts)
        return (
            self._write(f"{name}.crt", certificate.public_bytes(serialization.Encoding.PEM)),
            self._write(f"{name}.key", _pem(key)),
        )


@dataclass
class ControlPlane:
    """A running control plane; `kube` speaks to it as cluster-admin."""

    minor: str
    folder: Path
    etcd_url: str
    server: str
    certificates: Certificates
    webhook: TokenWebhook
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)

    @functools.cached_property
    def kube(self) -> Kube:
        admin_cert, admin_key = self.certificates.folder / "admin.crt", self.certificates.folder / "admin.key"
        return Kube(
            self.server,
            ca=self.certificates.ca_file,
            client_cert=(admin_cert, admin_key),
            token_for=self.webhook.token_for,
        )

    def kubeconfig(self, client_cert: Path, client_key: Path) -> dict:
        """A kubeconfig for this server, authenticating with a client certificate the cluster's CA signed."""
        user = {"client-certificate": str(client_cert), "client-key": str(client_key)}
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": "engine-tests",
            "clusters": [
                {
                    "name": "engine-tests",
                    "cluster": {"server": self.server, "certificate-authority": str(self.certificates.ca_file)},
                }
            ],
            "users": [{"name": "engine-tests", "user": user}],
            "contexts": [{"name": "engine-tests", "context": {"cluster": "engine-tests", "user": "engine-tests"}}],
        }

    def stop(self, *names: str) -> None:
        """Stop these components, or everything (the token webhook too)."""
        if not names:
            self.webhook.stop()
        for name in names or reversed(list(self.processes)):
            process = self.processes.pop(name, None)
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def host_address() -> str:
    """This host's address on its default route: one an endpoint may hold (the API server refuses loopback)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("10.255.255.255", 9))  # no packet is sent: this only picks the route's source address
        return probe.getsockname()[0]


def _kwok_stages(engine_stages: str, folder: Path) -> Path:
    """kwok's stages with the pods this host plays (`PLAYED_BY_HOST`) left to a stage of their own: ready only
    once annotated with `PLAYED_AT`, and at that address."""
    stages = list(yaml.safe_load_all(Path(engine_stages).read_text()))
    (ready,) = [s for s in stages if s["metadata"]["name"] == "pod-ready"]
    played = json.loads(json.dumps(ready))
    label = f'.metadata.labels."{PLAYED_NAME_LABEL}"'
    ready["spec"]["selector"]["matchExpressions"].append(
        {"key": label, "operator": "NotIn", "values": list(PLAYED_BY_HOST)}
    )
    played["metadata"]["name"] = "pod-ready-played-by-host"
    played["spec"]["selector"]["matchExpressions"] += [
        {"key": label, "operator": "In", "values": list(PLAYED_BY_HOST)},
        {"key": f'.metadata.annotations."{PLAYED_AT}"', "operator": "Exists"},
    ]
    template = played["spec"]["next"]["statusTemplate"]
    start, end = template.index("{{ $podIPs :="), template.index("phase: Running")
    address = f'{{{{ index .metadata.annotations "{PLAYED_AT}" | Quote }}}}'
    played["spec"]["next"]["statusTemplate"] = (
        f"{template[:start]}podIP: {address}\npodIPs:\n- ip: {address}\n{template[end:]}"
    )
    path = folder / "kwok-stages.yaml"
    path.write_text(yaml.safe_dump_all([*stages, played], sort_keys=False))
    return path


def _start(folder: Path, name: str, command: list[str]) -> subprocess.Popen:
    log = open(folder / f"{name}.log", "wb")  # the process writes it until it stops
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def wait_until(plane: ControlPlane, what: str, ready, timeout: float = 120) -> None:
    """Polls `ready` until it is true, failing early if a control-plane process exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for name, process in plane.processes.items():
            if process.poll() is not None:
                tail = (plane.folder / f"{name}.log").read_text(errors="replace").splitlines()[-5:]
                raise RuntimeError(f"{name} exited with {process.returncode} waiting for {what}: {tail}")
        with contextlib.suppress(Exception):
            if ready():
                return
        time.sleep(0.25)
    raise TimeoutError(f"the control plane did not get {what} within {timeout:.0f} s ({plane.folder})")


def _kubeconfig_file(plane: ControlPlane, name: str, common_name: str, groups: tuple[str, ...] = ()) -> Path:
    cert, key = plane.certificates.issue(name, common_name, groups=groups)
    path = plane.folder / f"{name}.kubeconfig"
    path.write_text(yaml.safe_dump(plane.kubeconfig(cert, key)))
    return path


def _service_account_keys(folder: Path) -> tuple[Path, Path]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private, public = folder / "sa.key", folder / "sa.pub"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
        )
    )
    public.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return private, public


def start_etcd(folder: Path, etcd: str) -> tuple[subprocess.Popen, str]:
    client, peer = free_port(), free_port()
    url, peer_url = f"http://127.0.0.1:{client}", f"http://127.0.0.1:{peer}"
    process = _start(
        folder,
        "etcd",
        [
            etcd,
            "--data-dir",
            str(folder / "etcd"),
            "--listen-client-urls",
            url,
            "--advertise-client-urls",
            url,
            "--listen-peer-urls",
            peer_url,
            "--initial-advertise-peer-urls",
            peer_url,
            "--initial-cluster",
            f"default={peer_url}",
            "--log-level",
            "warn",
            "--quota-backend-bytes",
            str(2**31),
        ],
    )
    return process, url


def start_control_plane(
    folder: Path,
    minor: str,
    *,
    etcd_url: str | None = None,
    etcd_process: subprocess.Popen | None = None,
    certificates: Certificates | None = None,
    webhook: TokenWebhook | None = None,
    port: int | None = None,
) -> ControlPlane:
    """Start every component at Kubernetes `minor`; an etcd (and certificates, and the server's port) from an
    earlier plane may be given to restart the control plane at another minor on the same data."""
    binaries = kubernetes_binaries(minor)
    folder.mkdir(parents=True, exist_ok=True)
    certificates = certificates or Certificates(folder / "pki")
    processes: dict[str, subprocess.Popen] = {}
    if etcd_url is None:
        etcd_process, etcd_url = start_etcd(folder, binaries["etcd"])
    if etcd_process is not None:
        processes["etcd"] = etcd_process
    port = port or free_port()
    webhook = webhook or TokenWebhook()
    plane = ControlPlane(minor, folder, etcd_url, f"https://127.0.0.1:{port}", certificates, webhook, processes)
    pki = certificates.folder
    serving_cert, serving_key = certificates.issue(
        "apiserver", "kube-apiserver", hosts=("127.0.0.1", "localhost", "kubernetes.default.svc")
    )
    certificates.issue("admin", "engine-tests-admin", groups=("system:masters",))
    sa_key, sa_pub = (pki / "sa.key", pki / "sa.pub") if (pki / "sa.key").is_file() else _service_account_keys(pki)
    authenticator = folder / "token-webhook.kubeconfig"
    authenticator.write_text(yaml.safe_dump(webhook.kubeconfig()))
    plane.processes["kube-apiserver"] = _start(
        folder,
        "kube-apiserver",
        [
            binaries["kube-apiserver"],
            "--etcd-servers",
            etcd_url,
            "--bind-address",
            "127.0.0.1",
            "--advertise-address",
            "127.0.0.1",
            "--secure-port",
            str(port),
            "--tls-cert-file",
            str(serving_cert),
            "--tls-private-key-file",
            str(serving_key),
            "--client-ca-file",
            str(certificates.ca_file),
            "--authentication-token-webhook-config-file",
            str(authenticator),
            "--authentication-token-webhook-version",
            "v1",
            "--service-account-key-file",
            str(sa_pub),
            "--service-account-signing-key-file",
            str(sa_key),
            "--service-account-issuer",
            "https://kubernetes.default.svc",
            "--authorization-mode",
            "Node,RBAC",
            "--enable-admission-plugins",
            "NodeRestriction",
            "--service-cluster-ip-range",
            "172.20.0.0/16",
            "--allow-privileged=true",
            "--endpoint-reconciler-type",
            "none",
            # Webhooks and aggregated APIs called at their Services' endpoints, as kube-proxy would route them.
            "--enable-aggregator-routing=true",
            "--profiling=false",
            "-v",
            "1",
        ],
    )
    wait_until(plane, "a ready API server", lambda: plane.kube.get_raw("/readyz") == "ok")
    for component, common_name in (
        ("kube-controller-manager", "system:kube-controller-manager"),
        ("kube-scheduler", "system:kube-scheduler"),
    ):
        kubeconfig = _kubeconfig_file(plane, component, common_name)
        extra = (
            [
                "--service-account-private-key-file",
                str(sa_key),
                "--root-ca-file",
                str(certificates.ca_file),
                "--use-service-account-credentials=true",
                "--cluster-signing-duration",
                "1h",
            ]
            if component == "kube-controller-manager"
            else []
        )
        plane.processes[component] = _start(
            folder,
            component,
            [
                binaries[component],
                "--kubeconfig",
                str(kubeconfig),
                "--authentication-kubeconfig",
                str(kubeconfig),
                "--authorization-kubeconfig",
                str(kubeconfig),
                "--leader-elect=false",
                "--bind-address",
                "127.0.0.1",
                "--secure-port",
                str(free_port()),
                "-v",
                "1",
                *extra,
            ],
        )
    kwok_kubeconfig = _kubeconfig_file(plane, "kwok", "engine-tests-kwok", groups=("system:masters",))
    plane.processes["kwok"] = _start(
        folder,
        "kwok",
        [
            binaries["kwok"],
            "--config",
            str(_kwok_stages(binaries["kwok-stages"], folder)),
            "--kubeconfig",
            str(kwok_kubeconfig),
            "--manage-all-nodes=false",
            "--manage-nodes-with-annotation-selector",
            f"{KWOK_NODE_ANNOTATION}=fake",
            "--cidr",
            "10.244.0.0/16",
            "--node-ip",
            "10.0.0.10",
            "--server-address",
            f"127.0.0.1:{free_port()}",
        ],
    )
    wait_until(
        plane,
        "the default service account",
        lambda: plane.kube.get("v1", "ServiceAccount", "default", namespace="default") is not None,
    )
    return plane


def restart_at(plane: ControlPlane, minor: str) -> ControlPlane:
    """The control plane restarted at another minor on the same etcd, certificates, authenticator and address,
    as an EKS version upgrade replaces the control plane and keeps the cluster's data and endpoint."""
    plane.stop(*(name for name in list(plane.processes) if name != "etcd"))
    return start_control_plane(
        plane.folder / f"at-{minor}",
        minor,
        etcd_url=plane.etcd_url,
        etcd_process=plane.processes.pop("etcd", None),
        certificates=plane.certificates,
        webhook=plane.webhook,
        port=int(plane.server.rsplit(":", 1)[1]),
    )


@contextlib.contextmanager
def control_plane(folder: Path, minor: str) -> Iterator[ControlPlane]:
    plane = start_control_plane(folder, minor)
    try:
        yield plane
    finally:
        plane.stop()
