"""A small client of the Kubernetes API for the engine tests: discovery, get, create and server-side apply,
as any identity (impersonation), with the server's own answer (status code, reason, message) kept whole."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests


@dataclass(frozen=True)
class Identity:
    """Who a request is made as: a user, its groups and its extras, as the token authenticator tells them."""

    user: str
    groups: tuple[str, ...] = ()
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any]

    @property
    def allowed(self) -> bool:
        return 200 <= self.status < 300

    @property
    def message(self) -> str:
        return str(self.body.get("message", ""))

    @property
    def reason(self) -> str:
        return str(self.body.get("reason", ""))

    def denied_by(self, policy: str) -> bool:
        """Refused, and by this ValidatingAdmissionPolicy (the server names the policy in its message)."""
        return not self.allowed and f"ValidatingAdmissionPolicy '{policy}'" in self.message


EVERY_NAMESPACE = "*"


@dataclass(frozen=True)
class Resource:
    group_version: str
    plural: str
    namespaced: bool

    def path(self, namespace: str | None, name: str | None = None) -> str:
        """The object's path (`namespace` EVERY_NAMESPACE: the collection across namespaces)."""
        base = f"/api/{self.group_version}" if "/" not in self.group_version else f"/apis/{self.group_version}"
        if self.namespaced and namespace != EVERY_NAMESPACE:
            base += f"/namespaces/{namespace or 'default'}"
        base += f"/{self.plural}"
        return f"{base}/{name}" if name else base


def _dry_run(dry_run: bool) -> dict[str, str]:
    """The query that has the server judge a write whole (validation, admission) without storing it."""
    return {"dryRun": "All"} if dry_run else {}


class Kube:
    """The admin's client (its certificate), or any identity's through a bearer token from `token_for`."""

    def __init__(self, server: str, *, ca: Path, client_cert: tuple[Path, Path], token_for: Callable[[Identity], str]):
        self.server = server
        self.token_for = token_for
        self.session, self.anonymous = requests.Session(), requests.Session()
        for session in (self.session, self.anonymous):
            # The environment's CA bundle and proxies would override the cluster's CA (requests' precedence).
            session.trust_env = False
            session.verify = str(ca)
        self.session.cert = (str(client_cert[0]), str(client_cert[1]))
        self._resources: dict[tuple[str, str], Resource] = {}

    def _request(self, method: str, path: str, *, identity: Identity | None = None, **kwargs) -> Answer:
        session = self.session
        if identity is not None:
            session = self.anonymous
            kwargs["headers"] = {**kwargs.get("headers", {}), "Authorization": f"Bearer {self.token_for(identity)}"}
        response = session.request(method, self.server + path, timeout=60, **kwargs)
        try:
            body = response.json()
        except ValueError:
            body = {"message": response.text}
        return Answer(response.status_code, body if isinstance(body, dict) else {"items": body})

    def get_raw(self, path: str) -> str:
        response = self.session.get(self.server + path, timeout=10)
        return response.text

    def resource(self, api_version: str, kind: str) -> Resource:
        if (api_version, kind) not in self._resources:
            path = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
            answer = self._request("GET", path)
            if not answer.allowed:
                raise LookupError(f"the server serves no {api_version}: {answer.status} {answer.message}")
            for entry in answer.body.get("resources", []):
                if "/" not in entry["name"]:
                    self._resources[(api_version, entry["kind"])] = Resource(
                        api_version, entry["name"], entry["namespaced"]
                    )
        if (api_version, kind) not in self._resources:
            raise LookupError(f"the server serves no {kind} in {api_version}")
        return self._resources[(api_version, kind)]

    def get(self, api_version: str, kind: str, name: str, *, namespace: str | None = None) -> dict | None:
        answer = self._request("GET", self.resource(api_version, kind).path(namespace, name))
        return answer.body if answer.allowed else None

    def list(self, api_version: str, kind: str, *, namespace: str | None = None) -> list[dict]:
        answer = self._request("GET", self.resource(api_version, kind).path(namespace))
        return list(answer.body.get("items", [])) if answer.allowed else []

    def create(self, obj: dict, *, identity: Identity | None = None, dry_run: bool = False) -> Answer:
        path = self.resource(obj["apiVersion"], obj["kind"]).path(obj.get("metadata", {}).get("namespace"))
        return self._request("POST", path, identity=identity, json=obj, params=_dry_run(dry_run))

    def apply(self, obj: dict, *, identity: Identity | None = None, strict: bool = False) -> Answer:
        """Server-side apply, forced: the server's whole validation and admission on the object. `strict`: a
        field the schema does not know is refused (by default the server drops it with a warning)."""
        meta = obj.get("metadata", {})
        path = self.resource(obj["apiVersion"], obj["kind"]).path(meta.get("namespace"), meta["name"])
        params = {"fieldManager": "seedance-engine-tests", "force": "true"}
        if strict:
            params["fieldValidation"] = "Strict"
        return self._request(
            "PATCH",
            path,
            identity=identity,
            json=obj,
            params=params,
            headers={"Content-Type": "application/apply-patch+yaml"},
        )

    def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: dict,
        *,
        namespace: str | None = None,
        identity: Identity | None = None,
        dry_run: bool = False,
        subresource: str | None = None,
    ) -> Answer:
        path = self.resource(api_version, kind).path(namespace, name) + (f"/{subresource}" if subresource else "")
        return self._request(
            "PATCH",
            path,
            identity=identity,
            json=patch,
            params=_dry_run(dry_run),
            headers={"Content-Type": "application/merge-patch+json"},
        )

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        *,
        namespace: str | None = None,
        identity: Identity | None = None,
        dry_run: bool = False,
        dependents: bool = False,
    ) -> Answer:
        """`dependents`: the garbage collector deletes what the object owns too (a Job's pods and its Kueue
        Workload; the API's default for a Job orphans them)."""
        path = self.resource(api_version, kind).path(namespace, name)
        params = {**_dry_run(dry_run), **({"propagationPolicy": "Background"} if dependents else {})}
        return self._request("DELETE", path, identity=identity, params=params)

    def can(
        self,
        identity: Identity,
        verb: str,
        resource: str,
        *,
        namespace: str | None = None,
        group: str = "",
        subresource: str = "",
        name: str = "",
    ) -> bool:
        """The authorizer's own answer (SelfSubjectAccessReview as `identity`): RBAC and Node, no admission."""
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {
                "resourceAttributes": {
                    "verb": verb,
                    "resource": resource,
                    "group": group,
                    "namespace": namespace or "",
                    "subresource": subresource,
                    "name": name,
                }
            },
        }
        answer = self.create(review, identity=identity)
        if not answer.allowed:
            raise RuntimeError(f"access review failed: {answer.status} {answer.message}")
        return bool(answer.body["status"].get("allowed"))
