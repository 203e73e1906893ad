"""Options as the programs read them: Go's flags in either dash form, `=` or the next word, the last one
winning; kingpin's `--no-` form; words inside a shell string; durations in minutes."""

import pytest

from policies.readers.options import minutes, programs, switched_on, values, words


def test_words_come_from_the_command_and_the_arguments_split_as_a_shell_splits_them():
    container = {"command": ["sh", "-c", "prometheus '--web.enable-lifecycle'"], "args": ["--x=1"]}
    assert words(container) == ["sh", "-c", "prometheus", "--web.enable-lifecycle", "--x=1"]
    assert programs({**container, "image": "quay.io/prometheus/prometheus:v3.6.0@sha256:ab"}) >= {"prometheus", "sh"}


@pytest.mark.parametrize(
    "given, on",
    [
        (["--kubelet-insecure-tls"], True),
        (["-kubelet-insecure-tls"], True),
        (["--kubelet-insecure-tls=T"], True),
        (["--kubelet-insecure-tls=false"], False),
        (["--kubelet-insecure-tls", "--kubelet-insecure-tls=0"], False),
        (["--no-kubelet-insecure-tls", "--kubelet-insecure-tls"], True),
        (["--kubelet-insecure-tls-x"], False),
        ([], False),
    ],
)
def test_a_boolean_option_ends_up_as_its_last_spelling_says(given, on):
    assert switched_on(given, "kubelet-insecure-tls") is on


def test_a_valued_option_takes_its_value_after_an_equals_sign_or_as_the_next_word():
    found = ["--scale-down-unneeded-time", "24h", "-scale-down-unneeded-time=5m"]
    assert values(found, "scale-down-unneeded-time", takes_value=True) == ["24h", "5m"]


@pytest.mark.parametrize(
    "duration, expected", [("10m", 10), ("1h30m", 90), ("600s", 10), ("24h", 1440), ("ten", None), ("5", None)]
)
def test_a_go_duration_reads_in_minutes(duration, expected):
    assert minutes(duration) == expected
