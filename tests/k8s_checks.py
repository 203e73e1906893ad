"""Checks of the Kubernetes objects a plan declares: official schemas and checkov."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import yaml
from kubernetes_validate import utils as kubernetes_validate

from seedance_client.engine import Plan, Secret

CHECKOV = Path(sys.executable).parent / "checkov"


def _whole_numbers(value):
    # The engine sees every number as a float (protobuf); the schemas want integers back. A secret value
    # is checked as the value the provider receives.
    if isinstance(value, Secret):
        return _whole_numbers(value.value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole_numbers(v) for v in value]
    return value


def declared_manifests(plan: Plan, parent_type: str | None = None) -> list[dict]:
    """The Kubernetes objects of the plan (not Helm releases), optionally only inside components of one type."""
    parents = {r.urn for r in plan.resources if r.type == parent_type} if parent_type else None
    return [
        _whole_numbers(r.inputs)
        for r in plan.resources
        if r.type.startswith("kubernetes:")
        and "helm.sh" not in r.type
        and "apiVersion" in r.inputs
        and (parents is None or r.parent in parents)
    ]


# Custom resources: the official schemas do not cover them (their CRDs ship with their operators; Kueue's
# are applied from its pinned chart on the engine tests' API server, which judges them: tests/engines).
CUSTOM_API_GROUPS = ("monitoring.coreos.com/", "kueue.x-k8s.io/")


def schema_errors(manifests: list[dict], kubernetes_version: str) -> list[str]:
    errors = []
    for manifest in manifests:
        if manifest["apiVersion"].startswith(CUSTOM_API_GROUPS):
            continue
        try:
            kubernetes_validate.validate(manifest, f"{kubernetes_version}.0", strict=True)
        except kubernetes_validate.ValidationError as error:
            errors.append(f"{manifest['kind']}/{manifest['metadata']['name']}: {error.message}")
    return errors


def checkov_results(manifests: list[dict], workdir: Path) -> dict:
    path = workdir / "manifests.yaml"
    # checkov takes a file with `{{ }}` for a Helm template and skips it whole; the EBS driver's tag
    # templates ({{ .PVCNamespace }}) are opaque values to every check, so they are scanned as plain words.
    path.write_text(re.sub(r"\{\{\s*\.(\w+)\s*\}\}", r"\1", yaml.safe_dump_all(manifests)))
    result = subprocess.run(
        [
            str(CHECKOV),
            "-f",
            str(path),
            "--framework",
            "kubernetes",
            "-o",
            "json",
            "--quiet",
            "--compact",
            "--skip-download",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    document = json.loads(result.stdout)
    document = document[0] if isinstance(document, list) else document
    assert "results" in document, f"checkov scanned nothing: {document}"  # a skipped file is not a clean one
    return document


def skip_annotations(manifest: dict) -> set[str]:
    annotations = manifest["metadata"].get("annotations", {})
    return {v.split("=", 1)[0] for k, v in annotations.items() if k.startswith("checkov.io/skip")}


def without_skips(manifests: list[dict]) -> list[dict]:
    stripped = copy.deepcopy(manifests)
    for manifest in stripped:
        annotations = manifest["metadata"].get("annotations", {})
        for key in [k for k in annotations if k.startswith("checkov.io/skip")]:
            del annotations[key]
    return stripped


def checkov_resource(manifest: dict) -> str:
    return f"{manifest['kind']}.{manifest['metadata'].get('namespace', 'default')}.{manifest['metadata']['name']}"


def assert_checkov_clean_and_every_skip_needed(manifests: list[dict], workdir: Path) -> None:
    """No failed check, and each skip annotation names a check that fails without it."""
    scanned = checkov_results(manifests, workdir)
    failed = [(c["check_id"], c["resource"]) for c in scanned["results"]["failed_checks"]]
    assert failed == [], failed
    bare = checkov_results(without_skips(manifests), workdir)
    failing = {(c["resource"], c["check_id"]) for c in bare["results"]["failed_checks"]}
    for manifest in manifests:
        for check in skip_annotations(manifest):
            assert (checkov_resource(manifest), check) in failing, (
                f"{checkov_resource(manifest)} skips {check} needlessly"
            )


def node_labels(asg):
    prefix = "k8s.io/cluster-autoscaler/node-template/label/"
    return {t["key"][len(prefix) :]: t["value"] for t in asg.inputs["tags"] if t["key"].startswith(prefix)}


def selects(affinity, labels):
    """Required node affinity (In / NotIn / Exists) against a node's labels."""
    terms = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    checks = {
        "In": lambda e: labels.get(e["key"]) in e["values"],
        "NotIn": lambda e: labels.get(e["key"]) not in e["values"],
        "Exists": lambda e: e["key"] in labels,
    }
    return any(all(checks[e["operator"]](e) for e in term["matchExpressions"]) for term in terms)
