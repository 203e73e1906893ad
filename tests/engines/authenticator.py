"""The engine tests' token authenticator: a TokenReview webhook on 127.0.0.1, as EKS authenticates IAM
principals (aws-iam-authenticator is a webhook token authenticator). A test asks for a token for an
identity and the API server learns who it is from the webhook, `extra` keys in their own letter case
(`canonicalArn`, as EKS presents a kubelet's role), which impersonation headers would lower-case."""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.engines.kube import Identity


class TokenWebhook:
    def __init__(self) -> None:
        self._identities: dict[str, Identity] = {}
        self._lock = threading.Lock()
        webhook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                identity = webhook.identity_of(review["spec"]["token"])
                status: dict = {"authenticated": identity is not None}
                if identity is not None:
                    status["user"] = {
                        "username": identity.user,
                        "uid": identity.user,
                        "groups": list(identity.groups),
                        "extra": {key: list(values) for key, values in identity.extra.items()},
                    }
                body = json.dumps({**review, "status": status}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args) -> None:  # quiet: the API server logs its requests
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def token_for(self, identity: Identity) -> str:
        token = hashlib.sha256(repr(identity).encode()).hexdigest()
        with self._lock:
            self._identities[token] = identity
        return token

    def identity_of(self, token: str) -> Identity | None:
        with self._lock:
            return self._identities.get(token)

    def kubeconfig(self) -> dict:
        """What --authentication-token-webhook-config-file reads: the webhook as the cluster to call."""
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "webhook", "cluster": {"server": self.url}}],
            "users": [{"name": "api-server", "user": {}}],
            "contexts": [{"name": "webhook", "context": {"cluster": "webhook", "user": "api-server"}}],
            "current-context": "webhook",
        }

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
