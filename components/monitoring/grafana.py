"""Grafana's values: the dashboards as code, reachable by port-forward only. Pure.

No ingress and no load balancer; its namespace denies every connection in (a `kubectl port-forward`
reaches the pod through the kubelet, not the pod network) and lets it out to Prometheus alone. The
admin password is the chart's own: 40 random characters in a Secret of the cluster, kept across
upgrades (the chart looks the Secret up), never in a stack file or Pulumi's state.
"""

from __future__ import annotations

from typing import Any

from components.common.addon_resources import ADDON_RESOURCES
from components.compute.labels import system_placement
from components.compute.priority import PLATFORM_PRIORITY_CLASS
from components.monitoring.dashboards import DATASOURCE_UID

NAMESPACE = "grafana"
RELEASE = "grafana"
GRAFANA_LABELS = {"app.kubernetes.io/name": "grafana"}
DASHBOARDS_CONFIG_MAP = "seedance-dashboards"
PROVIDER = "seedance"


def grafana_values(prometheus_url: str) -> dict[str, Any]:
    """Dashboards from the stack's ConfigMap (mounted by the chart: no sidecar, no download init
    container), Prometheus as the one datasource; no test pod, no RBAC (Grafana reads no Kubernetes API),
    no volume (dashboards are provisioned, so nothing lives only in Grafana)."""
    return {
        "testFramework": {"enabled": False},
        "rbac": {"create": False},
        "persistence": {"enabled": False},
        "initChownData": {"enabled": False},
        "resources": ADDON_RESOURCES["grafana"],
        **system_placement(PLATFORM_PRIORITY_CLASS),
        "grafana.ini": {
            "analytics": {"check_for_updates": False, "reporting_enabled": False},
            "users": {"allow_sign_up": False},
            "auth.anonymous": {"enabled": False},
        },
        "datasources": {
            "datasources.yaml": {
                "apiVersion": 1,
                "datasources": [
                    {
                        "name": "Prometheus",
                        "type": "prometheus",
                        "uid": DATASOURCE_UID,
                        "access": "proxy",
                        "url": prometheus_url,
                        "isDefault": True,
                        "editable": False,
                    }
                ],
            }
        },
        "dashboardProviders": {
            "dashboardproviders.yaml": {
                "apiVersion": 1,
                "providers": [
                    {
                        "name": PROVIDER,
                        "orgId": 1,
                        "folder": "seedance",
                        "type": "file",
                        "disableDeletion": True,
                        "editable": False,
                        "options": {"path": f"/var/lib/grafana/dashboards/{PROVIDER}"},
                    }
                ],
            }
        },
        "dashboardsConfigMaps": {PROVIDER: DASHBOARDS_CONFIG_MAP},
    }
