"""`TritonServing`: one served model set on the `online` GPU pool. Its autoscaler reads Pods metrics
that `MetricsPipeline` (components/monitoring/metrics_pipeline.py) publishes from Triton's own metrics."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import replace

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pulumi_random as random

from components.common.iam import irsa_trust_policy
from components.common.k8s_objects import declare
from components.common.manifests import namespace as namespace_manifest
from components.serving.config import TritonServingConfig
from components.serving.manifests import (
    ADMIN_KEY_SECRET_KEY,
    PORTS,
    TritonSpec,
    admin_key_secret_name,
    image,
    serving_manifests,
)
from components.serving.publishing import (
    bucket_access,
    marker_key,
    marker_text,
    operator_policy,
    operator_role_name,
    publisher_policy,
    publisher_role_name,
)


def model_reader_policy(bucket: str, prefixes: list[str], key_arn: str, region: str, partition: str = "aws") -> dict:
    """Read only the model set's prefixes, and decrypt only through S3 (listing is the whole bucket's)."""
    arn = f"arn:{partition}:s3:::{bucket}"
    return bucket_access(
        arn, [(["s3:GetObject"], [f"{arn}/{p}/*" for p in prefixes])], ["kms:Decrypt"], key_arn, region
    )


def deployment_timeouts(config: TritonServingConfig, node_provision_minutes: int) -> dict[str, str]:
    """How long `pulumi up` waits for the Deployment. A new replica may need a new GPU node (the
    autoscaler's provision limit), an image pull and the startup budget; creating starts the warm pool
    at once, while a rolling update (maxSurge 1) replaces up to max_replicas pods one after another."""
    per_pod = math.ceil((config.image_pull_budget_seconds + config.startup_budget_seconds) / 60)
    create = node_provision_minutes + per_pod
    update = node_provision_minutes + config.max_replicas * per_pod
    return {"create": f"{create}m", "update": f"{update}m"}


class TritonServing(pulumi.ComponentResource):
    endpoints: dict[str, object]

    def __init__(
        self,
        name: str,
        config: TritonServingConfig,
        *,
        warm_pool: int,
        region: str,
        account_id: str,
        partition: str,
        bucket_name: str,
        kms_key_arn: pulumi.Input[str],
        oidc_provider_arn: pulumi.Input[str],
        oidc_issuer_url: pulumi.Input[str],
        node_provision_minutes: int,
        provider: k8s.Provider,
        metrics_scraper: tuple[str, dict[str, str]],
        publishers: list[str],
        operators: list[str],
        tags: dict[str, str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("seedance:serving:TritonServing", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        namespace = config.namespace
        account_name = f"triton-{config.name}"
        prefixes = config.prefixes
        # A fixed role name makes its ARN known up front, so the manifests stay plain data.
        role_name = f"{name}-models"[:64]
        role = aws.iam.Role(
            f"{name}-role",
            name=role_name,
            assume_role_policy=pulumi.Output.all(oidc_provider_arn, oidc_issuer_url).apply(
                lambda v: json.dumps(irsa_trust_policy(v[0], v[1], namespace, account_name))
            ),
            tags=tags,
            opts=child,
        )
        aws.iam.RolePolicy(
            f"{name}-models",
            role=role.id,
            policy=pulumi.Output.from_input(kms_key_arn).apply(
                lambda arn: json.dumps(model_reader_policy(bucket_name, prefixes, arn, region, partition))
            ),
            opts=child,
        )
        bucket_arn = f"arn:{partition}:s3:::{bucket_name}"
        # The one role that may write model files under the set's prefixes (the bucket policy denies everyone
        # else), assumed only by `publishers` (the set's configured principals, the teams' CI); and, for the
        # teams' people, the operator role: the switch (promote, roll back) and no model file.
        self._bucket_role(
            f"{name}-publisher",
            f"{name}-publish",  # the names the stacks' state has
            publisher_role_name(name),
            publishers,
            publisher_policy,
            bucket_arn,
            prefixes,
            kms_key_arn,
            region,
            tags,
        )
        if operators:
            self._bucket_role(
                f"{name}-operator",
                f"{name}-operate",
                operator_role_name(name),
                operators,
                operator_policy,
                bucket_arn,
                prefixes,
                kms_key_arn,
                region,
                tags,
            )
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider)
        ns = declare(namespace_manifest(namespace, "restricted"), f"{name}-namespace", in_cluster)
        spec = TritonSpec(
            name=config.name,
            namespace=namespace,
            image=image(config.registry, config.image_version, config.image_digest),
            model_repository=f"s3://{bucket_name}/{config.model_prefix}",
            model_control_mode=config.model_control_mode,
            repository_poll_seconds=config.repository_poll_seconds,
            gpus=config.gpus,
            cpu=config.cpu,
            memory_gib=config.memory,
            node_group=config.node_group,
            warm_pool=warm_pool,
            max_replicas=config.max_replicas,
            queue_time_target_us=config.queue_time_target_us,
            requests_per_second_target=config.requests_per_second_target,
            startup_budget_seconds=config.startup_budget_seconds,
            drain_seconds=config.drain_seconds,
            exit_timeout_seconds=config.exit_timeout_seconds,
            service_account=account_name,
            role_arn=f"arn:{partition}:iam::{account_id}:role/{role_name}",
            region=region,
            tags=tuple(sorted(tags.items())),
            client_namespaces=tuple(config.client_namespaces),
            metrics_scraper=(metrics_scraper[0], tuple(sorted(metrics_scraper[1].items()))),
        )
        canary = None
        if config.canary is not None:
            canary = replace(
                spec,
                image=image(config.registry, config.canary.image_version, config.canary.image_digest),
                track="canary",
                model_repository=f"s3://{bucket_name}/{config.canary.model_prefix}",
                replicas=config.canary.replicas,
            )
        # Triton exits on a prefix with nothing under it: one file makes it a repository before any model.
        markers = [
            aws.s3.BucketObjectv2(
                f"{name}-repository-{n}",
                bucket=bucket_name,
                key=marker_key(prefix),
                content=marker_text(prefix),
                content_type="text/markdown",
                tags=tags,
                opts=child,
            )
            for n, prefix in enumerate(prefixes)
        ]
        # The key to Triton's restricted APIs: generated once, kept secret in state, read by Triton's pods only
        # (no team has access to the set's namespace).
        admin_key = random.RandomPassword(f"{name}-admin-key", length=40, special=False, opts=child)
        admin_secret = k8s.core.v1.Secret(
            f"{name}-admin-key",
            metadata={"name": admin_key_secret_name(config.name), "namespace": namespace},
            type="Opaque",
            string_data={ADMIN_KEY_SECRET_KEY: admin_key.result},
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[ns]),
        )
        after_namespace = pulumi.ResourceOptions(
            parent=self, provider=provider, depends_on=[ns, role, admin_secret, *markers]
        )
        manifests = serving_manifests(spec, canary)
        timeouts = pulumi.CustomTimeouts(**deployment_timeouts(config, node_provision_minutes))
        for manifest in manifests:
            suffix = manifest["kind"].lower() + ("-canary" if "canary" in manifest["metadata"]["name"] else "")
            if manifest["kind"] == "NetworkPolicy" and manifest["metadata"]["name"] != f"triton-{config.name}":
                suffix += f"-{manifest['metadata']['name']}"  # the namespace's own baseline
            wait = pulumi.ResourceOptions(custom_timeouts=timeouts) if manifest["kind"] == "Deployment" else None
            declare(manifest, f"{name}-{suffix}", pulumi.ResourceOptions.merge(after_namespace, wait))
        host = f"triton-{config.name}.{namespace}.svc.cluster.local"
        self.endpoints = {
            "http": f"http://{host}:{PORTS['http']}",
            "grpc": f"{host}:{PORTS['grpc']}",
            "metrics": f"http://{host}:{PORTS['metrics']}/metrics",
            "namespace": namespace,
            "model_repository": spec.model_repository,
            "canary_model_repository": canary.model_repository if canary else None,
            "publisher_role_arn": f"arn:{partition}:iam::{account_id}:role/{publisher_role_name(name)}",
            "operator_role_arn": (
                f"arn:{partition}:iam::{account_id}:role/{operator_role_name(name)}" if operators else None
            ),
            "client_namespaces": list(config.client_namespaces),
        }
        self.register_outputs({"endpoints": self.endpoints})

    def _bucket_role(
        self,
        name: str,
        policy_name: str,
        role_name: str,
        trusted: list[str],
        policy: Callable[[str, list[str], str, str], dict],
        bucket_arn: str,
        prefixes: list[str],
        kms_key_arn: pulumi.Input[str],
        region: str,
        tags: dict[str, str],
    ) -> None:
        """A role of the set's model prefixes, assumed only by `trusted`, holding `policy` over them."""
        role = aws.iam.Role(
            name,
            name=role_name,
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self),
            assume_role_policy=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [{"Effect": "Allow", "Principal": {"AWS": trusted}, "Action": "sts:AssumeRole"}],
                }
            ),
        )
        aws.iam.RolePolicy(
            policy_name,
            role=role.id,
            opts=pulumi.ResourceOptions(parent=self),
            policy=pulumi.Output.from_input(kms_key_arn).apply(
                lambda arn: json.dumps(policy(bucket_arn, prefixes, arn, region))
            ),
        )
