"""The chart repositories the program's Helm releases name, served from the chart cache to the real provider's
Helm client: an HTTPS proxy on 127.0.0.1 that answers CONNECT for any host with a certificate of its own CA
(the provider trusts it through SSL_CERT_FILE) and then speaks what Helm asks of that host: a classic
repository's `index.yaml` and chart archives, or an OCI registry's manifest and blobs (`oci://` charts). The
program and its repository URLs stay as they are; what a release installs is the cached chart at its version.
Nothing else is reachable through it."""

from __future__ import annotations

import hashlib
import io
import json
import socket
import ssl
import tarfile
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml

from tests.engines.cluster import Certificates

HELM_CONFIG = "application/vnd.cncf.helm.config.v1+json"
HELM_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"


@dataclass(frozen=True)
class Chart:
    name: str
    version: str
    metadata: dict
    archive: bytes

    @property
    def config(self) -> bytes:
        return json.dumps(self.metadata, sort_keys=True).encode()

    def manifest(self) -> bytes:
        return json.dumps(
            {
                "schemaVersion": 2,
                "mediaType": OCI_MANIFEST,
                "config": {"mediaType": HELM_CONFIG, "digest": _digest(self.config), "size": len(self.config)},
                "layers": [{"mediaType": HELM_LAYER, "digest": _digest(self.archive), "size": len(self.archive)}],
            }
        ).encode()


def _digest(data: bytes) -> str:
    return f"sha256:{hashlib.sha256(data).hexdigest()}"


def _archive(folder: Path, name: str) -> bytes:
    """The chart folder as `helm package` lays it out: every file under the chart's name."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            tar.add(path, arcname=f"{name}/{path.relative_to(folder)}")
    return buffer.getvalue()


def cached_charts(cache: Path) -> dict[tuple[str, str], Chart]:
    charts = {}
    for folder in sorted(p for p in cache.iterdir() if (p / "Chart.yaml").is_file()):
        metadata = yaml.safe_load((folder / "Chart.yaml").read_text())
        name, version = metadata["name"], str(metadata["version"])
        charts[name, version] = Chart(name, version, metadata, _archive(folder, name))
    return charts


def repository_index(charts: dict[tuple[str, str], Chart]) -> bytes:
    entries: dict[str, list] = {}
    for chart in charts.values():
        entries.setdefault(chart.name, []).append(
            {
                **chart.metadata,
                "urls": [f"{chart.name}-{chart.version}.tgz"],
                "digest": hashlib.sha256(chart.archive).hexdigest(),
            }
        )
    return yaml.safe_dump({"apiVersion": "v1", "entries": entries}).encode()


@dataclass
class ChartProxy:
    folder: Path
    charts: dict[tuple[str, str], Chart]
    requests: list[str] = field(default_factory=list)  # host and path of each request answered

    def start(self) -> ChartProxy:
        self.certificates = Certificates(self.folder)
        self.index = repository_index(self.charts)
        self._contexts: dict[str, ssl.SSLContext] = {}
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def env(self) -> dict[str, str]:
        """What the provider's process needs: the proxy, and the proxy's CA as its only trusted root. Loopback
        is never proxied (gRPC between the CLI, its plugins and the program honours the same variables)."""
        loopback = "127.0.0.1,localhost"
        return {
            "HTTPS_PROXY": self.url,
            "https_proxy": self.url,
            "NO_PROXY": loopback,
            "no_proxy": loopback,
            "SSL_CERT_FILE": str(self.certificates.ca_file),
        }

    def stop(self) -> None:
        self.server.shutdown()

    def _context(self, host: str) -> ssl.SSLContext:
        if host not in self._contexts:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*self.certificates.issue(host.replace(".", "_"), host, hosts=(host,)))
            self._contexts[host] = context
        return self._contexts[host]

    def answer(self, host: str, method: str, path: str) -> tuple[int, str, bytes, dict[str, str]]:
        """(status, content type, body, headers) for a request to `host`."""
        self.requests.append(f"{host}{path}")
        path = path.split("?", 1)[0]
        if path.endswith("/index.yaml"):
            return 200, "application/x-yaml", self.index, {}
        for chart in self.charts.values():
            if path.endswith(f"/{chart.name}-{chart.version}.tgz"):
                return 200, "application/gzip", chart.archive, {}
        if path == "/v2/":
            return 200, "application/json", b"{}", {}
        parts = path.removeprefix("/v2/").rsplit("/", 2)
        if path.startswith("/v2/") and len(parts) == 3:
            repository, kind, reference = parts
            name = repository.rsplit("/", 1)[-1]
            if kind == "manifests" and (name, reference) in self.charts:
                body = self.charts[name, reference].manifest()
                return 200, OCI_MANIFEST, body, {"Docker-Content-Digest": _digest(body)}
            if kind == "blobs":
                for chart in self.charts.values():
                    for blob, media in ((chart.config, HELM_CONFIG), (chart.archive, HELM_LAYER)):
                        if _digest(blob) == reference:
                            return 200, media, blob, {"Docker-Content-Digest": reference}
        return 404, "text/plain", b"not in the chart cache\n", {}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_CONNECT(self) -> None:
                host = self.path.rsplit(":", 1)[0]
                self.send_response(200, "Connection established")
                self.end_headers()
                try:
                    tunnel = proxy._context(host).wrap_socket(self.connection, server_side=True)
                except (ssl.SSLError, OSError):
                    return
                _serve_tunnel(proxy, host, tunnel)
                self.close_connection = True

        return Handler


def _serve_tunnel(proxy: ChartProxy, host: str, tunnel: socket.socket) -> None:
    """HTTP/1.1 requests inside one CONNECT tunnel, until the client closes it."""
    reader = tunnel.makefile("rb")
    try:
        while True:
            request_line = reader.readline().decode("latin-1").strip()
            if not request_line:
                return
            method, path, _ = request_line.split(" ", 2)
            headers = {}
            while (line := reader.readline().decode("latin-1").strip()) != "":
                key, _, value = line.partition(":")
                headers[key.strip().lower()] = value.strip()
            if int(headers.get("content-length", "0")):
                reader.read(int(headers["content-length"]))
            status, content_type, body, extra = proxy.answer(host, method, path)
            head = [f"HTTP/1.1 {status} {'OK' if status == 200 else 'Not Found'}", f"Content-Type: {content_type}"]
            head += [f"Content-Length: {len(body)}", *(f"{k}: {v}" for k, v in extra.items())]
            tunnel.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + (b"" if method == "HEAD" else body))
    except (OSError, ValueError):
        return
    finally:
        reader.close()
        tunnel.close()
