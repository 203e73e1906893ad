"""Grafana lets nobody in unsigned and keeps no known admin password, however it is configured: its
`grafana.ini` (a ConfigMap's, read as Grafana reads INI: sections and keys in any case, the last value
wins) and its `GF_<SECTION>_<KEY>` environment variables, which override the file. Anonymous access with
any role shows every dashboard and the Prometheus data behind it (costs per team, models, nodes); an
anonymous Editor or Admin changes them. The chart makes a random admin password unless one is set: a
fixed `admin`, `prom-operator` or empty one is everyone's."""

import base64
import configparser

from components.plan.resources import K8S_CONFIG_MAP, K8S_SECRET
from policies.framework import Rule
from policies.readers.options import TRUE, programs
from policies.readers.pods import containers, pods

# The chart's admin Secret keys (grafana chart: admin.passwordKey's default) and its app label.
PASSWORD_KEYS = ("admin-password",)
GRAFANA_LABEL = ("app.kubernetes.io/name", "grafana")
KNOWN_PASSWORDS = frozenset({"", "admin", "prom-operator", "password"})


def _ini(text):
    parser = configparser.ConfigParser(strict=False, interpolation=None, inline_comment_prefixes=(";", "#"))
    try:
        parser.read_string(str(text))
    except configparser.Error:
        return None
    return parser


def _settings(settings):
    """(section.key -> value) findings over Grafana's settings, keys lower case."""
    if str(settings.get("auth.anonymous.enabled", "false")).strip().lower() in TRUE:
        role = settings.get("auth.anonymous.org_role", "Viewer")
        yield f"lets anyone in without signing in (auth.anonymous enabled, as {role})"
    password = settings.get("security.admin_password")
    if password is not None and str(password).strip() in KNOWN_PASSWORDS:
        yield f"keeps a known admin password ({password!r})"


def _from_file(text):
    parser = _ini(text)
    if parser is None:
        yield "has a grafana.ini Grafana cannot read"
        return
    settings = {f"{s.lower()}.{k.lower()}": v for s in parser.sections() for k, v in parser.items(s)}
    yield from _settings(settings)


def _from_env(container):
    settings = {}
    for variable in container.get("env") or []:
        name = str((variable or {}).get("name") or "")
        if name.upper().startswith("GF_") and "value" in (variable or {}):
            section, _, key = name[3:].lower().rpartition("_")
            settings[f"{section.replace('_', '.')}.{key}"] = variable["value"]
    # GF_AUTH_ANONYMOUS_ENABLED and GF_AUTH_ANONYMOUS_ORG_ROLE: Grafana maps `.` and `-` in a section to `_`.
    for name in ("enabled", "org_role"):
        value = next((v for k, v in settings.items() if k.startswith("auth.anonymous") and k.endswith(name)), None)
        if value is None and name == "org_role":
            value = settings.get("auth.anonymous.org.role")
        if value is not None:
            settings[f"auth.anonymous.{name}"] = value
    yield from _settings(settings)


def _secret_passwords(resource):
    """The admin passwords a Grafana Secret holds (`stringData` as written, `data` decoded)."""
    labels = (resource.props.get("metadata") or {}).get("labels") or {}
    if labels.get(GRAFANA_LABEL[0]) != GRAFANA_LABEL[1]:
        return
    for key in PASSWORD_KEYS:
        if key in (resource.props.get("stringData") or {}):
            yield str(resource.props["stringData"][key])
        encoded = (resource.props.get("data") or {}).get(key)
        if encoded is not None:
            try:
                yield base64.b64decode(str(encoded), validate=True).decode()
            except (ValueError, UnicodeDecodeError):
                continue


def check(resource, config):
    if not resource.type.startswith("kubernetes:"):
        return
    if resource.type == K8S_SECRET:
        for password in _secret_passwords(resource):
            if password.strip() in KNOWN_PASSWORDS:
                yield f"{resource.name}: keeps a known Grafana admin password ({password!r})"
        return
    if resource.type == K8S_CONFIG_MAP:
        for key, text in (resource.props.get("data") or {}).items():
            if str(key).lower() == "grafana.ini":
                for finding in _from_file(text):
                    yield f"{resource.name}: {finding}"
        return
    for _, spec, _ in pods(resource):
        for where, container in containers(spec):
            if "grafana" in programs(container):
                for finding in _from_env(container):
                    yield f"{resource.name}: {where} {finding}"


RULE = Rule(
    name="kubernetes-grafana-disallow-anonymous-access",
    description="Grafana admits no anonymous user and keeps no known admin password, in its file or its environment.",
    severity="high",
    remediation="Keep the platform's grafana.ini (components/monitoring/grafana.py: auth.anonymous off) and "
    "the chart's generated admin password; give people accounts through the identity provider.",
    topics=("security",),
    check_resource=check,
    type_prefix="kubernetes:",
    standards=("Grafana: configure security (anonymous authentication, admin password)", "CIS Controls v8 4.7"),
)
