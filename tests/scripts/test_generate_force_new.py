"""The force-new generator reads a provider schema as the provider does: on a small checkout of one
SDKv2 resource, it lists the ForceNew attributes (nested ones dotted, in Pulumi's camelCase) and nothing
else, and stamps the versions it was given."""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

WIDGET = """package widget

// @SDKResource("aws_widget", name="Widget")
func resourceWidget() *schema.Resource {
	return &schema.Resource{
		Schema: map[string]*schema.Schema{
			"widget_name": {
				Type:     schema.TypeString,
				Required: true,
				ForceNew: true, // a new name is a new widget
			},
			"size": {
				Type:     schema.TypeInt,
				Optional: true,
			},
			"network_config": {
				Type:     schema.TypeList,
				MaxItems: 1,
				Optional: true,
				Elem: &schema.Resource{
					Schema: map[string]*schema.Schema{
						"subnet_id":      {Type: schema.TypeString, Required: true, ForceNew: true},
						"security_group": {Type: schema.TypeString, Optional: true, Description: "ForceNew: true"},
					},
				},
			},
		},
	}
}
"""


def test_the_generator_lists_force_new_paths_of_a_resource(tmp_path):
    service = tmp_path / "internal" / "service" / "widget"
    service.mkdir(parents=True)
    (service / "widget.go").write_text(WIDGET)
    types = tmp_path / "types.json"
    types.write_text(json.dumps([["aws:widget/widget:Widget", "aws_widget"]]))
    out = tmp_path / "table.json"
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "generate_force_new.py"),
            "--source",
            str(tmp_path),
            "--tf-version",
            "v6.0.0",
            "--pulumi-aws-version",
            "7.0.0",
            "--types",
            str(types),
            "--source-commit",
            "test",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    table = json.loads(out.read_text())
    assert table["types"] == {"aws:widget/widget:Widget": ["networkConfig.subnetId", "region", "widgetName"]}
    assert (table["pulumi-aws"], table["terraform-provider-aws"]) == ("7.0.0", "v6.0.0")
