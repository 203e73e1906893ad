"""Values that only stand in for real ones (the committed stacks carry some, so that a fresh clone plans
offline): documentation address ranges (RFC 5737), the example account of the AWS documentation, and
example domains (RFC 2606). An offline plan keeps them and lists them; a real `pulumi up` refuses
them, naming the key, before any resource is declared. Pure."""

from __future__ import annotations

import ipaddress
import re

from components.cluster.config import PRINCIPAL_LISTS
from components.stack.config import PROJECT, ConfigError, StackConfig

DOCUMENTATION_NETWORKS = tuple(ipaddress.IPv4Network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"))
EXAMPLE_ACCOUNT = "123456789012"
EXAMPLE_DOMAIN = re.compile(r"@(?:[\w-]+\.)*example\.(?:com|net|org)$", re.IGNORECASE)


def _documentation_range(cidr: str) -> bool:
    network = ipaddress.ip_network(cidr, strict=False)
    return isinstance(network, ipaddress.IPv4Network) and any(network.subnet_of(doc) for doc in DOCUMENTATION_NETWORKS)


def placeholders(config: StackConfig) -> list[tuple[str, str, str]]:
    """(key, value, what it is) for every placeholder in the config."""
    found = []
    if config.network.transit_gateway_id and "EXAMPLE" in config.network.transit_gateway_id:
        found.append(
            ("network.transit_gateway_id", config.network.transit_gateway_id, "an AWS documentation example ID")
        )
    for index, cidr in enumerate(config.cluster.public_endpoint_cidrs):
        if _documentation_range(cidr):
            found.append((f"cluster.public_endpoint_cidrs[{index}]", cidr, "a documentation address range (RFC 5737)"))
    for key in PRINCIPAL_LISTS:
        for index, arn in enumerate(getattr(config.cluster, key)):
            if f":{EXAMPLE_ACCOUNT}:" in arn:
                found.append((f"cluster.{key}[{index}]", arn, "the AWS documentation's example account"))
    for serving_index, serving in enumerate(config.serving):
        for index, arn in enumerate(serving.publisher_principal_arns):
            if f":{EXAMPLE_ACCOUNT}:" in arn:
                found.append(
                    (
                        f"serving[{serving_index}].publisher_principal_arns[{index}]",
                        arn,
                        "the AWS documentation's example account",
                    )
                )
    for index, arn in enumerate(config.budget.alert_topic_arns):
        if f":{EXAMPLE_ACCOUNT}:" in arn:
            found.append((f"budget.alert_topic_arns[{index}]", arn, "the AWS documentation's example account"))
    for index, email in enumerate(config.budget.alert_emails):
        if EXAMPLE_DOMAIN.search(email):
            found.append((f"budget.alert_emails[{index}]", email, "an example domain (RFC 2606)"))
    return found


def refuse_placeholders(config: StackConfig) -> None:
    """A real run stops at the first placeholder."""
    found = placeholders(config)
    if found:
        key, value, what = found[0]
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise ConfigError(
            f"invalid config {PROJECT}:{key} = {value!r}: {what}, a placeholder that must not reach a "
            f"real account; allowed: your own value{more} (`seedance plan` lists them all)"
        )
