"""seedance_client/contract.py: which exported contract versions a program accepts."""

import pytest

from seedance_client.contract import ContractVersionError, check_compatible


@pytest.mark.parametrize("exported", ["1.3", "1.4", "1.10"])
def test_the_same_major_at_the_needed_minor_or_later_is_compatible(exported):
    check_compatible(exported, "1.3")


@pytest.mark.parametrize("exported", ["1.2", "2.3", "0.9"])
def test_an_older_minor_or_another_major_is_refused(exported):
    with pytest.raises(ContractVersionError, match="this program needs 1.3"):
        check_compatible(exported, "1.3")


@pytest.mark.parametrize("exported", ["3", "", "1.3.0", "1.", ".3", "1.٣", "١.3", "1.3 ", None, 1.3, ["1", "3"]])
def test_a_version_that_is_not_major_minor_in_ascii_digits_is_refused_in_one_line(exported):
    with pytest.raises(ContractVersionError, match="not major.minor"):
        check_compatible(exported, "1.3")
