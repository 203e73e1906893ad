"""Stand-ins for the providers that cannot be built here (pulumi-aws, pulumi-tls, pulumi-random: bridged
Terraform providers whose modules the proxy does not serve), speaking the real provider protocol to the
real CLI, so that the platform program runs unchanged under the real engine. Every answer is
`seedance/offline_cloud.py`'s, the same the mock runtime gives `seedance plan`; the one thing added is the
cluster's endpoint and CA, which name the local control plane (`STANDIN_CLUSTER`, JSON).

Run as `python -m tests.engines.standin_provider <package> <engine address>`: the CLI starts it from a
`pulumi-resource-<package>` script on PATH and reads the port it prints."""

from __future__ import annotations

import json
import os
import sys
from concurrent import futures

import grpc
import pulumi
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc
from pulumi.runtime.proto.plugin_pb2 import PluginInfo
from pulumi.runtime.rpc import UNKNOWN

from seedance.offline_cloud import OfflineCloud

STANDIN_CLUSTER = "SEEDANCE_STANDIN_CLUSTER"
EKS_CLUSTER = "aws:eks/cluster:Cluster"


def _plain(message: struct_pb2.Struct) -> dict:
    return json_format.MessageToDict(message)


def _struct(values: dict) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    message.update(values)
    return message


def _type_and_name(urn: str) -> tuple[str, str]:
    """urn:pulumi:stack::project::parent$type::name -> (type, name)."""
    qualified, name = urn.split("::")[-2:]
    return qualified.rsplit("$", 1)[-1], name


def _has_unknowns(value: object) -> bool:
    if isinstance(value, dict):
        return any(_has_unknowns(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_unknowns(v) for v in value)
    return value == UNKNOWN


class StandinProvider(provider_pb2_grpc.ResourceProviderServicer):
    def __init__(self, package: str):
        self.package = package
        self.cloud: OfflineCloud | None = None
        self.cluster = json.loads(os.environ.get(STANDIN_CLUSTER, "{}"))

    def _cloud(self) -> OfflineCloud:
        if self.cloud is None:
            self.cloud = OfflineCloud(os.environ.get("AWS_REGION", "us-east-1"))
        return self.cloud

    def _state(self, urn: str, inputs: dict, resource_id: str = "") -> tuple[str, dict]:
        token, name = _type_and_name(urn)
        found_id, state = self._cloud().new_resource(
            pulumi.runtime.MockResourceArgs(token, name, inputs, resource_id=resource_id or None, custom=True)
        )
        if token == EKS_CLUSTER and self.cluster:
            state = {
                **state,
                "endpoint": self.cluster["endpoint"],
                "certificateAuthority": {"data": self.cluster["ca"]},
            }
        return resource_id or found_id, state

    # -- the provider itself -----------------------------------------------------------

    def GetPluginInfo(self, request, context):
        return PluginInfo(version="0.0.0-standin")

    def CheckConfig(self, request, context):
        return provider_pb2.CheckResponse(inputs=request.news)

    def DiffConfig(self, request, context):
        return provider_pb2.DiffResponse(changes=provider_pb2.DiffResponse.DIFF_NONE)

    def Configure(self, request, context):
        region = request.variables.get(f"{self.package}:config:region")
        if region:
            self.cloud = OfflineCloud(region)
        return provider_pb2.ConfigureResponse(acceptSecrets=False, supportsPreview=True)

    def Cancel(self, request, context):
        return empty_pb2.Empty()

    def Invoke(self, request, context):
        answer = self._cloud().call(pulumi.runtime.MockCallArgs(request.tok, _plain(request.args), ""))
        return provider_pb2.InvokeResponse(**{"return": _struct(answer)})

    # -- resources ------------------------------------------------------------------------

    def Check(self, request, context):
        return provider_pb2.CheckResponse(inputs=request.news)

    def Diff(self, request, context):
        olds, news = _plain(request.old_inputs), _plain(request.news)
        changed = sorted(key for key in olds.keys() | news.keys() if olds.get(key) != news.get(key))
        changes = provider_pb2.DiffResponse.DIFF_SOME if changed else provider_pb2.DiffResponse.DIFF_NONE
        return provider_pb2.DiffResponse(changes=changes, diffs=changed)

    def Create(self, request, context):
        inputs = _plain(request.properties)
        resource_id, state = self._state(request.urn, inputs)
        return provider_pb2.CreateResponse(id="" if request.preview else resource_id, properties=_struct(state))

    def Read(self, request, context):
        return provider_pb2.ReadResponse(id=request.id, properties=request.properties, inputs=request.inputs)

    def Update(self, request, context):
        news = _plain(request.news)
        if request.preview and _has_unknowns(news):
            return provider_pb2.UpdateResponse(properties=request.news)
        _, state = self._state(request.urn, news, request.id)
        return provider_pb2.UpdateResponse(properties=_struct(state))

    def Delete(self, request, context):
        return empty_pb2.Empty()


def main() -> None:
    package = sys.argv[1]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    provider_pb2_grpc.add_ResourceProviderServicer_to_server(StandinProvider(package), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(port, flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
