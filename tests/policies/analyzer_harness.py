"""Runs the policy pack the way the Pulumi engine does and talks to it over gRPC with the SDK's own
generated client (pulumi/pulumi: sdk/go/common/resource/plugin/analyzer_plugin.go).

The engine starts `python -u -m pulumi.policy <engine-address> .` in the pack directory with the stack
in PULUMI_PROJECT / PULUMI_STACK / PULUMI_DRY_RUN / PULUMI_CONFIG, reads the port from the first line
of stdout, then calls GetAnalyzerInfo, Configure (each policy's level and config: the pack's defaults
when the user gave no --policy-pack-config), Analyze per resource and AnalyzeStack once. Properties
travel as protobuf Structs, so numbers arrive as floats, unknowns as their sentinel strings and
secrets as the engine's secret objects.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import grpc
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

PACK = Path(__file__).resolve().parents[2] / "policies"
LEVELS = {
    analyzer_pb2.ADVISORY: "advisory",
    analyzer_pb2.MANDATORY: "mandatory",
    analyzer_pb2.REMEDIATE: "remediate",
    analyzer_pb2.DISABLED: "disabled",
}


@dataclass(frozen=True, order=True)
class Diagnostic:
    policy: str
    level: str
    urn: str  # "" for the stack
    message: str


def _struct(value: dict) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    json_format.ParseDict(json.loads(json.dumps(value)), message)
    return message


class RunningPack:
    def __init__(self, stack: str, project: str = "seedance-gpu"):
        environment = {
            **os.environ,
            "PULUMI_PROJECT": project,
            "PULUMI_STACK": stack,
            "PULUMI_DRY_RUN": "true",
            "PULUMI_CONFIG": "{}",
        }
        # The engine address is not dialled unless the pack logs; nothing listens there.
        self.process = subprocess.Popen(
            [sys.executable, "-u", "-m", "pulumi.policy", "127.0.0.1:1", "."],
            cwd=PACK,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.process.stdout is not None and self.process.stderr is not None  # piped
        port = self.process.stdout.readline().decode().strip()
        if not port.isdigit():
            self.close()
            raise RuntimeError(
                f"the pack did not print its port: {port!r}; stderr: {self.process.stderr.read().decode()}"
            )
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self.analyzer = analyzer_pb2_grpc.AnalyzerStub(self.channel)

    def configure_with_defaults(self) -> dict[str, str]:
        """What the engine does without --policy-pack-config: each policy's own level and schema defaults."""
        info = self.analyzer.GetAnalyzerInfo(empty_pb2.Empty())
        config, levels = {}, {}
        for policy in info.policies:
            schema = (
                json_format.MessageToDict(policy.configSchema.properties) if policy.HasField("configSchema") else {}
            )
            defaults = {k: v["default"] for k, v in schema.items() if "default" in v}
            config[policy.name] = analyzer_pb2.PolicyConfig(
                enforcementLevel=policy.enforcementLevel, properties=_struct(defaults)
            )
            levels[policy.name] = LEVELS[policy.enforcementLevel]
        self.analyzer.Configure(analyzer_pb2.ConfigureAnalyzerRequest(policyConfig=config))
        return levels

    def analyze(self, resources: list[dict]) -> list[Diagnostic]:
        """Each resource through Analyze, then all through AnalyzeStack; `resources` are plan-JSON shaped
        ({urn, type, name, inputs, dependencies}) with inputs as the engine would send them."""
        found = []
        for r in resources:
            response = self.analyzer.Analyze(
                analyzer_pb2.AnalyzeRequest(
                    type=r["type"], properties=_struct(r["inputs"]), urn=r["urn"], name=r["name"]
                )
            )
            found += [self._diagnostic(d, r["urn"]) for d in response.diagnostics]
        response = self.analyzer.AnalyzeStack(
            analyzer_pb2.AnalyzeStackRequest(
                resources=[
                    analyzer_pb2.AnalyzerResource(
                        type=r["type"],
                        properties=_struct(r["inputs"]),
                        urn=r["urn"],
                        name=r["name"],
                        dependencies=list(r.get("dependencies", [])),
                    )
                    for r in resources
                ]
            )
        )
        found += [self._diagnostic(d, "") for d in response.diagnostics]
        return sorted(found)

    @staticmethod
    def _diagnostic(d, analyzed_urn: str) -> Diagnostic:
        # The engine shows a resource policy's diagnostic on the resource it analysed.
        return Diagnostic(d.policyName, LEVELS[d.enforcementLevel], d.urn or analyzed_urn, d.message)

    def close(self) -> None:
        if getattr(self, "channel", None):
            self.channel.close()
        self.process.kill()
        self.process.wait(timeout=10)
        assert self.process.stdout is not None and self.process.stderr is not None  # piped
        self.process.stdout.close()
        self.process.stderr.close()
