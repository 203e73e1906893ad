"""What AWS and Kubernetes would answer, offline: invoke results and computed attributes.

Every value here is deterministic (derived from the resource's type and name) so that two
offline plans of the same config are identical. Nothing is fetched from the network.
"""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any, Callable

import pulumi

from components.catalog.regions import Region, regions

# AWS's documentation account id: obviously not a real account.
OFFLINE_DEPLOYER_ROLE = "seedance-deployer"
OFFLINE_ACCOUNT_ID = "123456789012"

# Physical-id prefixes AWS uses, so ids in the plan look like the ones a user will see.
_ID_PREFIXES = {
    "aws:ec2/vpc:Vpc": "vpc-",
    "aws:ec2/subnet:Subnet": "subnet-",
    "aws:ec2/internetGateway:InternetGateway": "igw-",
    "aws:ec2/eip:Eip": "eipalloc-",
    "aws:ec2/natGateway:NatGateway": "nat-",
    "aws:ec2/routeTable:RouteTable": "rtb-",
    "aws:ec2/routeTableAssociation:RouteTableAssociation": "rtbassoc-",
    "aws:ec2/securityGroup:SecurityGroup": "sg-",
    "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup": "sg-",
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": "sgr-",
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": "sgr-",
    "aws:ec2/vpcEndpoint:VpcEndpoint": "vpce-",
    "aws:ec2/launchTemplate:LaunchTemplate": "lt-",
    "aws:ebs/volume:Volume": "vol-",
    "aws:ec2/flowLog:FlowLog": "fl-",
}

# Resources whose physical name lives in an input other than `name`.
_NAME_INPUTS = {"aws:s3/bucketV2:BucketV2": "bucket", "aws:s3/bucket:Bucket": "bucket"}

# The names AWS gives service-linked roles (not derivable from the service name in general).
_SERVICE_LINKED_ROLE_NAMES = {"autoscaling.amazonaws.com": "AWSServiceRoleForAutoScaling"}

# AWS services whose ARNs carry no region (or no account).
_GLOBAL_SERVICES = {"iam", "budgets"}


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def _uuid(digest: str) -> str:
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def _pem(kind: str, name: str) -> str:
    """A stand-in PEM block: shaped like the real one, says what it stands for, holds no key."""
    body = base64.b64encode(f"offline plan: {name}".encode()).decode()
    return f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----\n"


def _tls_outputs(token: str, name: str) -> dict:
    """What the TLS provider computes (keys, certificates), as stand-ins an offline plan can show."""
    kind = token.split(":")[-1]
    if kind == "PrivateKey":
        return {"privateKeyPem": _pem("PRIVATE KEY", name), "publicKeyPem": _pem("PUBLIC KEY", name)}
    if kind == "CertRequest":
        return {"certRequestPem": _pem("CERTIFICATE REQUEST", name)}
    return {"certPem": _pem("CERTIFICATE", name)}


class OfflineCloud(pulumi.runtime.Mocks):
    """`pulumi.runtime.Mocks` for one AWS region, answering from the bundled tables."""

    def __init__(self, region_name: str, stack_outputs: Callable[[str], dict] | None = None,
                 existing_roles: tuple[str, ...] = ()):
        try:
            self.region: Region = regions()[region_name]
        except KeyError:
            known = ", ".join(sorted(regions()))
            raise ValueError(f"no offline data for region {region_name!r}; known regions: {known}") from None
        # Answers a StackReference: the outputs of the named stack (org/project/stack), or None if unknown.
        self._stack_outputs = stack_outputs
        # Role ARNs the account already has; by default a fresh account (no service-linked roles yet).
        self._existing_roles = existing_roles
        self._invokes: dict[str, Callable[[dict], dict]] = {
            "aws:index/getAvailabilityZones:getAvailabilityZones": self._availability_zones,
            "aws:index/getCallerIdentity:getCallerIdentity": self._caller_identity,
            "aws:iam/getSessionContext:getSessionContext": self._session_context,
            "aws:index/getPartition:getPartition": self._partition,
            "aws:index/getRegion:getRegion": self._region,
            "aws:ssm/getParameter:getParameter": self._ssm_parameter,
            "aws:iam/getRoles:getRoles": self._roles,
        }

    # -- invokes -------------------------------------------------------------------------

    def call(self, args: pulumi.runtime.MockCallArgs):
        answer = self._invokes.get(args.token)
        if answer is None:
            supported = ", ".join(sorted(self._invokes))
            raise NotImplementedError(
                f"offline mode has no answer for invoke {args.token}; it answers: {supported}"
            )
        return answer(args.args)

    def _availability_zones(self, args: dict) -> dict:
        """The region's zones; like a real account's, also an opted-in Local Zone (whose ID sorts first),
        unless the caller asks for availability zones only: EKS and NAT gateways do not run in one."""
        names, ids = list(self.region.zone_names), list(self.region.zone_ids)
        zone_types = [f.get("values") for f in args.get("filters") or [] if f.get("name") == "zone-type"]
        if ["availability-zone"] not in zone_types:
            names.insert(0, f"{self.region.name}-atl-2a")
            ids.insert(0, f"{ids[0].split('-')[0]}-atl2-az1")
        return {"id": self.region.name, "names": names, "zoneIds": ids,
                "groupNames": [self.region.name] * len(names), "state": "available"}

    def _caller_identity(self, _args: dict) -> dict:
        """A CI deployer as it usually is: a role's session."""
        account = OFFLINE_ACCOUNT_ID
        return {
            "accountId": account,
            "arn": f"arn:{self.region.partition}:sts::{account}:assumed-role/{OFFLINE_DEPLOYER_ROLE}/offline-plan",
            "id": account,
            "userId": "AROAOFFLINEPLAN:offline-plan",
        }

    def _session_context(self, args: dict) -> dict:
        """What IAM answers: a role session's issuer is the role; a user is its own."""
        arn = args["arn"]
        match = re.fullmatch(r"arn:([\w-]+):sts::(\d{12}):assumed-role/([\w+=,.@-]+)/([\w+=,.@-]+)", arn)
        if match is None:
            return {"id": arn, "arn": arn, "issuerArn": arn, "issuerId": "", "issuerName": "", "sessionName": ""}
        partition, account, role, session = match.groups()
        return {"id": arn, "arn": arn, "issuerArn": f"arn:{partition}:iam::{account}:role/{role}",
                "issuerId": "AROAOFFLINEPLAN", "issuerName": role, "sessionName": session}

    def _partition(self, _args: dict) -> dict:
        return {"id": self.region.partition, "partition": self.region.partition, "dnsSuffix": "amazonaws.com"}

    def _region(self, _args: dict) -> dict:
        return {"id": self.region.name, "name": self.region.name, "region": self.region.name,
                "endpoint": f"ec2.{self.region.name}.amazonaws.com"}

    def _roles(self, args: dict) -> dict:
        prefix = args.get("pathPrefix") or "/"
        pattern = re.compile(args.get("nameRegex") or ".*")
        found = [arn for arn in self._existing_roles
                 if f"/{arn.split(':role/', 1)[1]}".startswith(prefix) and pattern.search(arn.rsplit("/", 1)[1])]
        return {"id": self.region.name, "arns": found, "names": [arn.rsplit("/", 1)[1] for arn in found]}

    def _ssm_parameter(self, args: dict) -> dict:
        name = args["name"]
        # Public AMI parameters resolve to an image id; the id is a stand-in derived from the name.
        value = f"ami-{_digest(self.region.name, name)[:17]}" if "/image_id" in name else f"offline:{name}"
        return {"id": name, "name": name, "value": value, "insecureValue": value, "type": "String",
                "arn": f"arn:{self.region.partition}:ssm:{self.region.name}::parameter{name}"}

    # -- resources -----------------------------------------------------------------------

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        token, name, inputs = args.typ, args.name, dict(args.inputs)
        digest = _digest(token, name)
        if token.startswith("kubernetes:"):
            return f"{name}-{digest[:8]}", self._kubernetes_state(name, inputs, digest)
        if token == "pulumi:pulumi:StackReference":
            return self._stack_reference(inputs.get("name") or name)
        if token.startswith("tls:"):
            return f"{name}-{digest[:8]}", {**inputs, **_tls_outputs(token, name)}
        if token == "random:index/randomPassword:RandomPassword":  # a stand-in: shaped like one, says what it is
            return f"{name}-{digest[:8]}", {**inputs, "result": f"offline-plan-{digest[:24]}"}
        if not token.startswith("aws:"):
            return f"{name}-{digest[:8]}", inputs
        return self._aws_state(token, name, inputs, digest)

    def _stack_reference(self, stack: str):
        outputs = self._stack_outputs(stack) if self._stack_outputs else None
        if outputs is None:
            raise NotImplementedError(f"offline mode cannot read stack {stack!r}: it answers StackReferences only "
                                      "for stacks of a seedance project it can plan")
        return stack, {"name": stack, "outputs": outputs, "secretOutputNames": []}

    def _kubernetes_state(self, name: str, inputs: dict, digest: str) -> dict:
        metadata = dict(inputs.get("metadata") or {})
        # Like the provider's auto-naming: a random-looking suffix when no name is given.
        metadata.setdefault("name", f"{name}-{digest[:8]}")
        if "metadata" in inputs or inputs.get("kind"):
            inputs["metadata"] = metadata
        return inputs

    def _aws_state(self, token: str, name: str, inputs: dict, digest: str) -> tuple[str, dict]:
        region, partition, account = self.region.name, self.region.partition, OFFLINE_ACCOUNT_ID
        module = token.split(":")[1].split("/")[0]
        kind = token.split(":")[1].split("/")[1]
        name_input = _NAME_INPUTS.get(token, "name")
        physical_name = inputs.get(name_input) or f"{name}-{digest[:7]}"
        prefix = _ID_PREFIXES.get(token)
        resource_id = f"{prefix}{digest[:17]}" if prefix else physical_name
        service_region = "" if module in _GLOBAL_SERVICES else region
        state: dict[str, Any] = {
            **inputs,
            name_input: physical_name,
            "arn": f"arn:{partition}:{module}:{service_region}:{account}:{kind.lower()}/{physical_name}",
        }
        state.update(self._computed_attributes(token, name, inputs, digest, physical_name))
        return resource_id, state

    def _computed_attributes(self, token: str, name: str, inputs: dict, digest: str,
                             physical_name: str) -> dict[str, Any]:
        region, partition, account = self.region.name, self.region.partition, OFFLINE_ACCOUNT_ID
        if token == "aws:eks/cluster:Cluster":
            issuer_id = digest[:32].upper()
            return {
                "arn": f"arn:{partition}:eks:{region}:{account}:cluster/{physical_name}",
                "endpoint": f"https://{issuer_id}.gr7.{region}.eks.amazonaws.com",
                "certificateAuthority": {"data": base64.b64encode(b"offline-plan-ca").decode()},
                "identities": [{"oidcs": [{"issuer": f"https://oidc.eks.{region}.amazonaws.com/id/{issuer_id}"}]}],
                "vpcConfig": {**(inputs.get("vpcConfig") or {}), "clusterSecurityGroupId": f"sg-{digest[17:34]}"},
                "status": "ACTIVE",
            }
        if token == "aws:kms/key:Key":
            key_id = _uuid(digest)
            return {"arn": f"arn:{partition}:kms:{region}:{account}:key/{key_id}", "keyId": key_id}
        if token == "aws:iam/openIdConnectProvider:OpenIdConnectProvider":
            host = str(inputs.get("url", "")).removeprefix("https://")
            return {"arn": f"arn:{partition}:iam::{account}:oidc-provider/{host}"}
        if token in ("aws:s3/bucketV2:BucketV2", "aws:s3/bucket:Bucket"):
            return {"arn": f"arn:{partition}:s3:::{physical_name}", "id": physical_name,
                    "bucketRegionalDomainName": f"{physical_name}.s3.{region}.amazonaws.com"}
        if token == "aws:sns/topic:Topic":  # SNS ARNs end with the topic's name, no resource type
            return {"arn": f"arn:{partition}:sns:{region}:{account}:{physical_name}"}
        if token == "aws:lambda/function:Function":
            return {"arn": f"arn:{partition}:lambda:{region}:{account}:function:{physical_name}"}
        if token == "aws:sqs/queue:Queue":
            return {"arn": f"arn:{partition}:sqs:{region}:{account}:{physical_name}",
                    "url": f"https://sqs.{region}.amazonaws.com/{account}/{physical_name}"}
        if token == "aws:iam/serviceLinkedRole:ServiceLinkedRole":
            service = inputs["awsServiceName"]
            role_name = _SERVICE_LINKED_ROLE_NAMES.get(service, f"AWSServiceRoleFor{service.split('.')[0]}")
            return {"arn": f"arn:{partition}:iam::{account}:role/aws-service-role/{service}/{role_name}",
                    "name": role_name, "path": f"/aws-service-role/{service}/"}
        if token == "aws:cloudwatch/logGroup:LogGroup":
            return {"arn": f"arn:{partition}:logs:{region}:{account}:log-group:{physical_name}"}
        if token == "aws:autoscaling/group:Group":
            return {"arn": f"arn:{partition}:autoscaling:{region}:{account}:autoScalingGroup:{_uuid(digest)}:"
                           f"autoScalingGroupName/{physical_name}"}
        if token == "aws:ec2/launchTemplate:LaunchTemplate":
            return {"latestVersion": 1, "defaultVersion": 1}
        if token == "aws:ec2/eip:Eip":
            return {"allocationId": f"eipalloc-{digest[:17]}", "publicIp": "203.0.113.10"}
        return {}
