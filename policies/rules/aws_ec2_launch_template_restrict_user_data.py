"""A node's user data keeps its protections and runs nothing fetched at boot: the kubelet's anonymous
access, AlwaysAllow authorization and read-only port stay off (in NodeConfig's kubelet config and flags);
no script pipes a download into a shell or loosens the instance metadata options; no part of a kind the
gate cannot judge (an include URL, a boothook, cloud-config commands). Read as an instance reads it:
policies/readers/user_data.py."""

from components.plan.resources import INSTANCE_LAUNCHERS
from policies.framework import Rule
from policies.readers.user_data import findings


def check(resource, config):
    if resource.type not in INSTANCE_LAUNCHERS:
        return
    for finding in findings(resource.props.get("userData")):
        yield f"{resource.name}: its user data: {finding}"


RULE = Rule(
    name="aws-ec2-launch-template-restrict-user-data",
    description="Node user data keeps the kubelet's authentication and authorization on and runs nothing "
    "fetched at boot.",
    severity="critical",
    remediation="Keep the kubelet's defaults (anonymous off, Webhook authorization, read-only port 0); put what "
    "a node needs in its image or in the NodeConfig the platform writes, not in a script fetched at boot.",
    topics=("security", "compute"),
    check_resource=check,
    resource_types=frozenset(INSTANCE_LAUNCHERS),
    standards=("CIS EKS 3.2.1", "CIS EKS 3.2.2", "CIS EKS 3.2.4", "EKS BPG: Infrastructure security - node bootstrap"),
)
