"""Build the real engines the engine tests run (`make engines`): the Pulumi CLI, the Kubernetes provider,
kube-apiserver and kube-controller-manager at each Kubernetes minor the stacks use, etcd, kwok and Kueue's controller.

Each engine is a small wrapper module in this folder (go.mod, go.sum, and a main package where the upstream
one cannot be built from its module download); `go build -mod=readonly` checks every module it fetches
against the committed go.sum. Binaries go to a cache outside the clone ($SEEDANCE_ENGINE_CACHE, else
$XDG_CACHE_HOME/seedance/engines, else ~/.cache/seedance/engines), one folder per engine named by a hash of
its wrapper and the Go version, so a second run finds them and builds nothing. The manifest the tests read
(.engines.json at the clone's root, or $SEEDANCE_ENGINE_MANIFEST) maps each binary to its path.

Standard library only: it runs before any virtualenv exists.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KUBERNETES_PROVIDER_MODULE = "github.com/pulumi/pulumi-kubernetes/provider/v4"


@dataclass(frozen=True)
class Engine:
    name: str  # the wrapper folder
    version: str  # what the binaries report, and what the manifest records
    packages: tuple[str, ...]  # main packages, built into binaries named as their last path element
    ldflags: str = ""
    embeds_provider_schema: bool = False
    binary_names: tuple[str, ...] = field(default=())
    # Files of a module's download written beside the binaries as one YAML stream: (file name, module, paths).
    data: tuple[str, str, tuple[str, ...]] | None = None
    scripts: tuple[str, ...] = ()  # files of the wrapper folder installed beside the binaries, executable

    def binaries(self) -> tuple[str, ...]:
        return self.binary_names or tuple(p.rsplit("/", 1)[-1] for p in self.packages)


KUBERNETES_COMMANDS = tuple(
    f"k8s.io/kubernetes/cmd/{command}" for command in ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
)


def _kubernetes_version_flags(patch: str) -> str:
    """What Kubernetes' release build stamps: without it the server reports v0.0.0-master to its clients."""
    major, minor, _ = patch.split(".")
    return " ".join(
        f"-X k8s.io/component-base/version.{name}={value}"
        for name, value in (
            ("gitVersion", f"v{patch}"),
            ("gitMajor", major),
            ("gitMinor", minor),
            ("gitTreeState", "clean"),
        )
    )


ENGINES = (
    Engine("etcd", "3.6.16", (".",), binary_names=("etcd",)),
    *(
        Engine(f"kubernetes-{minor}", patch, KUBERNETES_COMMANDS, ldflags=_kubernetes_version_flags(patch))
        for minor, patch in (("1.35", "1.35.4"), ("1.36", "1.36.3"))
    ),
    # kwok plays nodes and pods by the stages it is given (kwokctl writes these; the kwok binary has none).
    Engine(
        "kwok",
        "0.8.0",
        ("sigs.k8s.io/kwok/cmd/kwok",),
        data=(
            "stages.yaml",
            "sigs.k8s.io/kwok",
            tuple(
                f"kustomize/stage/{path}.yaml"
                for path in (
                    "node/fast/node-initialize",
                    "node/heartbeat/node-heartbeat",
                    "pod/fast/pod-ready",
                    "pod/fast/pod-complete",
                    "pod/fast/pod-delete",
                )
            ),
        ),
    ),
    # Kueue's controller, at the version its pinned chart installs (components/tenancy/config.py KUEUE_VERSIONS).
    Engine("kueue", "0.19.2", ("sigs.k8s.io/kueue/cmd/kueue",)),
    Engine(
        "pulumi",
        "3.274.0",
        ("github.com/pulumi/pulumi/pkg/v3/cmd/pulumi",),
        ldflags="-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v3.274.0",
    ),
    Engine(
        "pulumi-language-python",
        "3.259.0",
        (".",),
        binary_names=("pulumi-language-python",),
        scripts=("pulumi-language-python-exec",),  # the shim the host runs programs with, found beside it
        ldflags="-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v3.259.0",
    ),
    Engine(
        "pulumi-kubernetes",
        "4.24.0+f47bc2d6f199",
        (".",),
        embeds_provider_schema=True,
        binary_names=("pulumi-resource-kubernetes",),
        ldflags=f"-X {KUBERNETES_PROVIDER_MODULE}/pkg/version.Version=4.24.0+f47bc2d6f199",
    ),
)


class EngineBuildError(Exception):
    """An engine could not be built; the message is one line."""


def cache_root() -> Path:
    if os.environ.get("SEEDANCE_ENGINE_CACHE"):
        return Path(os.environ["SEEDANCE_ENGINE_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "seedance" / "engines"


def manifest_path() -> Path:
    return Path(os.environ.get("SEEDANCE_ENGINE_MANIFEST") or ROOT / ".engines.json")


def go_version() -> str:
    if shutil.which("go") is None:
        raise EngineBuildError("the engine tests need Go 1.26 or newer (no `go` on PATH); `make plan` does not")
    out = subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def stamp(engine: Engine, go: str) -> str:
    """What a build depends on: the wrapper's files, the version flags and the Go toolchain."""
    digest = hashlib.sha256(f"{go}\n{engine}\n".encode())
    folder = HERE / engine.name
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _module_dir(build_dir: Path, module: str, env: dict[str, str]) -> Path:
    """Where the module the wrapper requires is unpacked, downloading it first (a cold cache has none)."""
    out = subprocess.run(
        ["go", "mod", "download", "-json", module], cwd=build_dir, capture_output=True, text=True, env=env
    )
    found = json.loads(out.stdout or "{}")
    if out.returncode != 0 or not found.get("Dir"):
        why = found.get("Error") or " ".join(out.stderr.split()[-12:])
        raise EngineBuildError(f"cannot download {module}: {why}")
    return Path(found["Dir"])


def _write_provider_embeds(build_dir: Path, version: str, env: dict[str, str]) -> None:
    """What the provider's `go generate` writes: its schema with the version set, and its mapping compacted."""
    source = _module_dir(build_dir, KUBERNETES_PROVIDER_MODULE, env) / "cmd" / "pulumi-resource-kubernetes"
    schema = json.loads((source / "schema.json").read_text())
    schema["version"] = version
    (build_dir / "schema-embed.json").write_text(json.dumps(schema, separators=(",", ":")))
    mapping = json.loads((source / "terraform-mapping.json").read_text())
    (build_dir / "terraform-mapping-embed.json").write_text(json.dumps(mapping, separators=(",", ":")))


def output_dir(engine: Engine, go: str, root: Path) -> Path:
    """Where the engine's binaries of this stamp live; finished when it holds `.complete`."""
    return root / f"{engine.name}-{engine.version}-{stamp(engine, go)}"


def build(engine: Engine, go: str, out_dir: Path) -> None:
    """Build the engine's binaries into `out_dir`, then remove its earlier builds."""
    root = out_dir.parent
    build_dir = root / f".build-{out_dir.name}"
    shutil.rmtree(build_dir, ignore_errors=True)
    shutil.copytree(HERE / engine.name, build_dir)
    env = {**os.environ, "GOFLAGS": "-mod=readonly -buildvcs=false", "CGO_ENABLED": "0"}
    if engine.embeds_provider_schema:
        _write_provider_embeds(build_dir, engine.version, env)
    out_dir.mkdir(parents=True, exist_ok=True)
    command = ["go", "build", "-trimpath", "-ldflags", f"-s -w {engine.ldflags}".strip()]
    for package, binary in zip(engine.packages, engine.binaries()):
        done = subprocess.run(
            [*command, "-o", str(out_dir / binary), package], cwd=build_dir, capture_output=True, text=True, env=env
        )
        if done.returncode != 0:
            tail = " | ".join(done.stderr.strip().splitlines()[-3:])
            raise EngineBuildError(f"building {binary} ({engine.name}) failed: {tail}")
    if engine.data:
        file_name, module, paths = engine.data
        source = _module_dir(build_dir, module, env)
        (out_dir / file_name).write_text("\n---\n".join((source / p).read_text() for p in paths))
    for script in engine.scripts:
        shutil.copy2(build_dir / script, out_dir / script)
    shutil.rmtree(build_dir, ignore_errors=True)
    # Earlier builds of this engine: its name then a version (pulumi-kubernetes-* is not pulumi's).
    for stale in root.glob(f"{engine.name}-*"):
        if stale != out_dir and stale.name.removeprefix(f"{engine.name}-")[0].isdigit():
            shutil.rmtree(stale, ignore_errors=True)
    (out_dir / ".complete").write_text(json.dumps({"version": engine.version, "go": go}) + "\n")


def main() -> int:
    try:
        go = go_version()
        root = cache_root()
        root.mkdir(parents=True, exist_ok=True)
        binaries: dict[str, dict[str, str]] = {}
        started = time.monotonic()
        for engine in ENGINES:
            folder = output_dir(engine, go, root)
            if not (folder / ".complete").is_file():
                began = time.monotonic()
                print(f"engines: building {engine.name} {engine.version} ({', '.join(engine.binaries())})", flush=True)
                build(engine, go, folder)
                print(f"engines: {engine.name} built in {time.monotonic() - began:.0f} s", flush=True)
            files = (*engine.binaries(), *([engine.data[0]] if engine.data else []))
            binaries[engine.name] = {"version": engine.version, **{f: str(folder / f) for f in files}}
        manifest_path().write_text(json.dumps({"go": go, "engines": binaries}, indent=2) + "\n")
        print(f"engines: ready in {root} ({time.monotonic() - started:.0f} s)")
        return 0
    except EngineBuildError as error:
        print(f"engines: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
