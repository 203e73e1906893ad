"""seedance_client/publishing.py's pure pieces: which version a rollback serves."""

from seedance_client.publishing import rollback_target


def test_a_rollback_never_targets_what_serves_now():
    """A canary abandoned puts the stable version back: its entry's `from` was the pair, the entry before
    it started from the stable version itself. Neither is a state to go back to; the one before is."""
    history = [
        {"from": [1], "to": [2]},  # promoted 2
        {"from": [2], "to": [2, 3]},  # canary of 3 beside 2
        {"from": [2, 3], "to": [2]},  # canary abandoned
    ]
    assert rollback_target(history, [2]) == 1


def test_nothing_to_roll_back_to_when_every_earlier_state_is_now():
    assert rollback_target([{"from": [2], "to": [2]}], [2]) is None
