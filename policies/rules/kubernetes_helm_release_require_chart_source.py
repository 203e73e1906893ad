"""The gate judges what a Helm release installs, so a release whose chart it cannot render is a finding,
never a silent pass: `seedance check` renders every release from its pinned chart source and reports
here each one it could not (chart not in the cache, a template error)."""

from policies.framework import Rule


def check(resources, config):
    for entry in config["unrendered"]:
        yield entry["urn"], f"{entry['urn'].rsplit('::', 1)[-1]}: not rendered, so not judged: {entry['reason']}"


RULE = Rule(
    name="kubernetes-helm-release-require-chart-source",
    description="Every Helm release is rendered from its pinned chart source and its objects judged like the "
    "plan's own.",
    severity="high",
    remediation="Put the chart's source at <chart cache>/<chart>-<version> ($SEEDANCE_CHART_CACHE, else "
    "../shared/charts; the release names the chart and its pinned version) and check again.",
    topics=("security", "kubernetes"),
    config={
        "unrendered": {
            "type": "array",
            "default": [],
            "items": {
                "type": "object",
                "required": ["urn", "reason"],
                "properties": {"urn": {"type": "string"}, "reason": {"type": "string"}},
            },
        }
    },
    check_stack=check,
    standards=("Pod Security Standards: baseline", "EKS BPG: Pod security - audit what charts deploy"),
)
