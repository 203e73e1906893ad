import ipaddress

import pytest

from components.network.subnets import plan_subnets


def test_subnets_are_disjoint_and_inside_the_vpc():
    layout = plan_subnets("10.60.0.0/16", ["a", "b", "c"], 18, 24)
    networks = [ipaddress.ip_network(c) for z in layout for c in (z.private_cidr, z.public_cidr)]
    vpc = ipaddress.ip_network("10.60.0.0/16")
    assert all(n.subnet_of(vpc) for n in networks)
    assert not any(a.overlaps(b) for i, a in enumerate(networks) for b in networks[i + 1 :])
    assert [z.private_cidr for z in layout] == ["10.60.0.0/18", "10.60.64.0/18", "10.60.128.0/18"]
    assert layout[0].public_cidr == "10.60.192.0/24"


def test_too_many_zones_for_the_range_is_refused():
    with pytest.raises(ValueError, match="need 66560 addresses; 10.0.0.0/16 has 65536"):
        plan_subnets("10.0.0.0/16", ["a", "b", "c", "d"], 18, 24)


def test_public_subnets_larger_than_private_are_refused():
    with pytest.raises(ValueError, match="private /24 <= public /20"):
        plan_subnets("10.0.0.0/16", ["a", "b"], 24, 20)
