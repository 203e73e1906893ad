import json

import pytest

from components.stack.config import ConfigError, parse_config_values

VALID = {
    "aws:region": "us-east-1",
    "seedance-gpu:env": "dev",
    "seedance-gpu:tags": json.dumps({"team": "ml", "cost-center": "cc-1"}),
    "seedance-gpu:budget": json.dumps({"monthly_usd": 1000, "alert_emails": ["ml-platform@example.com"]}),
    "seedance-gpu:network": json.dumps({"az_count": 3, "nat_gateways": "single"}),
    "seedance-gpu:cluster": json.dumps({"deployer_cidrs": ["10.0.200.0/24"]}),  # a runner inside the VPC
}


def with_value(key, value):
    values = dict(VALID)
    if value is None:
        values.pop(key)
    else:
        values[key] = value if isinstance(value, str) else json.dumps(value)
    return values


def test_valid_config_gets_defaults_and_derived_values():
    config = parse_config_values(VALID)
    assert config.cluster_name == "seedance-dev"
    assert config.resource_tags == {"team": "ml", "cost-center": "cc-1", "env": "dev"}
    assert config.cluster.kubernetes_version == "1.35"  # the default: a version in standard support
    assert config.usable_zones(
        {"us-east-1c": "use1-az4", "us-east-1a": "use1-az1", "us-east-1b": "use1-az2", "us-east-1d": "use1-az6"}
    ) == ["us-east-1a", "us-east-1b", "us-east-1c"]


def test_zones_are_chosen_by_zone_id_and_never_one_eks_refuses():
    """In this account us-east-1a is use1-az3, where EKS takes no control-plane subnet, and the names
    sort otherwise than the IDs: the same physical zones as in every other account are chosen."""
    config = parse_config_values(VALID)
    available = {
        "us-east-1a": "use1-az3",
        "us-east-1b": "use1-az6",
        "us-east-1c": "use1-az1",
        "us-east-1d": "use1-az2",
        "us-east-1e": "use1-az4",
    }
    assert config.usable_zones(available) == ["us-east-1c", "us-east-1d", "us-east-1e"]
    with pytest.raises(ConfigError, match="az_count = 3: this account has 2 zones in us-east-1 that EKS accepts"):
        config.usable_zones({"us-east-1a": "use1-az3", "us-east-1b": "use1-az1", "us-east-1c": "use1-az2"})


@pytest.mark.parametrize(
    "key, value, expected",
    [
        (
            "seedance-gpu:network",
            {"az_count": 0},
            "seedance-gpu:network.az_count = 0: Input should be greater than or equal to 2; allowed: >= 2 and <= 6",
        ),
        ("seedance-gpu:network", {"az_count": 7}, "seedance-gpu:network.az_count = 7"),
        (
            "seedance-gpu:network",
            {"vpc_cidr": "8.8.0.0/16"},
            'seedance-gpu:network.vpc_cidr = "8.8.0.0/16": must be a private (RFC 1918) range',
        ),
        ("seedance-gpu:network", {"vpc_cidr": "10.0.0.0/12"}, "between /16 and /24"),
        (
            "seedance-gpu:network",
            {"vpc_cidr": "10.0.0.0/18"},
            'seedance-gpu:network.vpc_cidr = "10.0.0.0/18": 3 zones of /19 private and /24 public subnets need '
            "25344 addresses",
        ),
        (
            "seedance-gpu:network",
            {"nat_gateways": "two"},
            "seedance-gpu:network.nat_gateways = \"two\": allowed: 'single' or 'per_az'",
        ),
        (
            "seedance-gpu:network",
            {"natgw": 1},
            "seedance-gpu:network.natgw = 1: unknown key; allowed keys here: az_count, flow_log_gb_month, "
            "flow_log_retention_days, flow_logs, nat_gateways",
        ),
        ("seedance-gpu:env", "qa", "seedance-gpu:env = \"qa\": allowed: 'dev', 'staging' or 'prod'"),
        ("seedance-gpu:tags", {"team": "ml"}, 'seedance-gpu:tags = {"team": "ml"}: must include non-empty cost-center'),
        ("seedance-gpu:budget", None, "seedance-gpu:budget = (missing): required key is missing"),
        (
            "seedance-gpu:budget",
            {"monthly_usd": -5},
            "seedance-gpu:budget.monthly_usd = -5: Input should be greater than 0",
        ),
        (
            "seedance-gpu:cluster",
            {},
            "seedance-gpu:cluster.deployer_cidrs = []: the API endpoint is private and nothing may reach it",
        ),
        (
            "seedance-gpu:cluster",
            {"deployer_cidrs": ["8.8.8.0/24"]},
            'seedance-gpu:cluster.deployer_cidrs = ["8.8.8.0/24"]: 8.8.8.0/24 must be a private range',
        ),
        (
            "seedance-gpu:cluster",
            {"kubernetes_version": "1.9"},
            'seedance-gpu:cluster.kubernetes_version = "1.9": allowed: "1.33" (standard support to 2026-07-29',
        ),
        (
            "seedance-gpu:cluster",
            {"kubernetes_version": 1.33},
            "seedance-gpu:cluster.kubernetes_version = 1.33: Input should be a valid string",
        ),
        (
            "seedance-gpu:cluster",
            {"public_endpoint_cidrs": ["0.0.0.0/0"]},
            'seedance-gpu:cluster.public_endpoint_cidrs = ["0.0.0.0/0"]: 0.0.0.0/0 would expose',
        ),
        (
            "seedance-gpu:cluster",
            {"log_retention_days": 10},
            "seedance-gpu:cluster.log_retention_days = 10: CloudWatch accepts one of 1, 3, 5",
        ),
        (
            "seedance-gpu:cluster",
            {"system_nodes": {"min_size": 3, "desired_size": 2}},
            'seedance-gpu:cluster.system_nodes = {"min_size": 3, "desired_size": 2}: '
            "need min_size <= desired_size <= max_size",
        ),
        (
            "seedance-gpu:cluster",
            {"system_nodes": {"instance_types": ["large"]}},
            "seedance-gpu:cluster.system_nodes.instance_types = [\"large\"]: 'large' is not an EC2 instance type",
        ),
        (
            "seedance-gpu:unknown",
            "x",
            'seedance-gpu:unknown = "x": unknown key; allowed keys here: budget, capacity, cluster, egress_traffic, '
            "endpoints, env, gpu_node_groups, monitoring, network, queues, scheduling, serving, storage, tags",
        ),
        ("aws:region", "mars-1", 'aws:region = "mars-1": must be one of'),
    ],
)
def test_bad_value_names_key_value_and_allowed(key, value, expected):
    with pytest.raises(ConfigError) as caught:
        parse_config_values(with_value(key, value))
    message = str(caught.value)
    assert message.startswith("invalid config ")
    assert expected in message
    assert "\n" not in message


def test_account_with_fewer_zones_than_asked_is_a_config_error():
    config = parse_config_values(VALID)
    with pytest.raises(ConfigError, match="az_count = 3: this account has 2 zones in us-east-1 that EKS accepts"):
        config.usable_zones({"us-east-1a": "use1-az1", "us-east-1b": "use1-az2"})


def test_the_programs_edge_turns_a_config_error_into_pulumis_one_line_error():
    """The config model is pure (no Pulumi); the program's edge hands a bad value to `pulumi up` as a
    RunError, which it prints as one line with no traceback."""
    import pulumi

    from components.stack.program import config_errors_as_run_errors

    assert not issubclass(ConfigError, pulumi.RunError)
    with pytest.raises(pulumi.RunError, match=r"^az_count = 3: this account has 2 zones$") as raised:
        with config_errors_as_run_errors():
            raise ConfigError("az_count = 3: this account has 2 zones")
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


def test_a_history_volume_needs_a_system_node_in_every_zone():
    """Issue 37, item 4: an EBS volume stays in its zone; fewer system nodes than zones could leave Prometheus
    with none where its history is, so the stack says so, or keeps an emptyDir."""
    two_nodes = {"deployer_cidrs": ["10.0.200.0/24"], "system_nodes": {"min_size": 2, "desired_size": 2}}
    with pytest.raises(
        ConfigError,
        match=r"system_nodes.min_size = 2: Prometheus's history volume needs a system node "
        r"in each of the 3 zones; allowed: >= 3",
    ):
        parse_config_values(with_value("seedance-gpu:cluster", two_nodes))
    values = with_value("seedance-gpu:cluster", two_nodes)
    values["seedance-gpu:monitoring"] = json.dumps({"persistent": False})
    assert not parse_config_values(values).monitoring.persistent
    assert parse_config_values(VALID).monitoring.persistent  # the defaults hold together: 3 zones, 3 nodes
