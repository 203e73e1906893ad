"""Triton serves the model control mode its stack config sets: `explicit` opens the model load API to every
caller of its Service (any model, any code, into prod), so a Triton container's arguments, however
spelled (`--model-control-mode=x`, `--model-control-mode x`, inside a shell command; the last one wins,
as Triton's option parser takes it), must name an allowed mode. Triton parses its options with
`getopt_long`, which takes any prefix that names one option: `--model-cont=explicit` is the same option
(`--model-con` also begins `--model-config-name`, so Triton refuses it and does not start)."""

from components.plan.resources import POD_CARRIERS, pod_spec
from policies.framework import Rule
from policies.readers.pods import containers

OPTION = "--model-control-mode"
DEFAULT_MODE = "none"  # Triton's own default (src/command_line_parser.cc)
# The shortest prefix getopt_long reads as OPTION alone: Triton's other options beginning `model-c` are
# model-config-name only (server src/command_line_parser.cc at e1db8a6, 2.73.0dev, 2026-08-19).
SHORTEST_ABBREVIATION = "--model-cont"


def _option(word: str) -> bool:
    """Whether a word (before any `=`) is OPTION or a prefix getopt_long takes for it."""
    return word.startswith(SHORTEST_ABBREVIATION) and OPTION.startswith(word)


def tokens(container: dict) -> list[str]:
    """The words of its command and arguments, a shell string split as a shell would split these options
    (quotes around a value are not part of it)."""
    return [
        word.replace('"', "").replace("'", "")
        for part in [*(container.get("command") or []), *(container.get("args") or [])]
        for word in str(part).split()
    ]


def mode_of(words: list[str]) -> str:
    mode = DEFAULT_MODE
    for index, word in enumerate(words):
        name, given, value = word.partition("=")
        if given and _option(name):
            mode = value
        elif not given and _option(word) and index + 1 < len(words):
            mode = words[index + 1]
    return mode.lower()


def check(resource, config):
    spec = pod_spec(resource)
    if spec is None:
        return
    namespace = (resource.props.get("metadata") or {}).get("namespace")
    allowed = config["namespace_modes"].get(namespace, config["allowed_modes"])
    for where, container in containers(spec):
        text = " ".join(
            str(p) for p in [container.get("image"), *(container.get("command") or []), *(container.get("args") or [])]
        )
        if "tritonserver" not in text:
            continue  # not Triton (its image, or a command that starts it)
        mode = mode_of(tokens(container)) if SHORTEST_ABBREVIATION in text else DEFAULT_MODE
        if mode not in allowed:
            yield f"{resource.name}: {where} runs Triton with {OPTION}={mode}; allowed here: {', '.join(allowed)}"


RULE = Rule(
    name="kubernetes-deployment-require-triton-model-control",
    description="Triton runs with the model control mode its stack config sets (poll or none), never explicit.",
    severity="critical",
    remediation="Set serving[].model_control_mode in the stack config (poll or none); models reach Triton through "
    "`seedance model publish`, never its load API.",
    topics=("security", "serving"),
    config={
        "allowed_modes": {"type": "array", "items": {"enum": ["poll", "none"]}, "default": ["poll", "none"]},
        "namespace_modes": {"type": "object", "default": {}},
    },
    check_resource=check,
    resource_types=frozenset(POD_CARRIERS),
    standards=("Triton: model management (model control modes)", "EKS BPG: Multi-tenancy - isolate what tenants run"),
)
