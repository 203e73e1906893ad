from components.cluster.kubeconfig import render_kubeconfig
from components.common.iam import autoscaling_role_arn, irsa_trust_policy, stack_key_policy


def test_irsa_trust_is_limited_to_one_service_account():
    doc = irsa_trust_policy(
        "arn:aws:iam::1:oidc-provider/oidc.example/id/X",
        "https://oidc.example/id/X",
        "kube-system",
        "ebs-csi-controller-sa",
    )
    condition = doc["Statement"][0]["Condition"]["StringEquals"]
    assert condition == {
        "oidc.example/id/X:sub": "system:serviceaccount:kube-system:ebs-csi-controller-sa",
        "oidc.example/id/X:aud": "sts.amazonaws.com",
    }


def test_stack_key_lets_autoscaling_use_it_for_node_volumes():
    doc = stack_key_policy("aws", "123456789012", "us-east-1", autoscaling_role_arn("aws", "123456789012"))
    principals = {s["Sid"]: s["Principal"] for s in doc["Statement"]}
    assert "AWSServiceRoleForAutoScaling" in principals["AutoScalingUsesKeyForVolumes"]["AWS"]
    logs = next(s for s in doc["Statement"] if s["Sid"] == "CloudWatchLogsOfThisAccount")
    assert logs["Condition"]["ArnLike"]["kms:EncryptionContext:aws:logs:arn"] == "arn:aws:logs:us-east-1:123456789012:*"


def test_kubeconfig_authenticates_through_aws_cli_for_the_right_cluster():
    config = render_kubeconfig("c1", "https://x", "Q0E=", "eu-west-1")
    exec_args = config["users"][0]["user"]["exec"]["args"]
    assert exec_args[:4] == ["eks", "get-token", "--cluster-name", "c1"]
    assert "eu-west-1" in exec_args
    assert config["clusters"][0]["cluster"]["server"] == "https://x"


def test_registry_k8s_io_mirror_bucket_follows_its_region_table():
    from components.common.iam import cluster_read_only_buckets

    assert "arn:aws:s3:::prod-registry-k8s-io-us-east-1/*" in cluster_read_only_buckets("aws", "us-east-1")
    london = cluster_read_only_buckets("aws", "eu-west-2")
    assert "arn:aws:s3:::767373bbdcb8270361b96548387bf2a9ad0d48758c35-eu-west-2/*" in london
    assert not any("prod-registry-k8s-io" in arn for arn in london)
