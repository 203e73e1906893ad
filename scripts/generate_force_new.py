#!/usr/bin/env python3
"""Generate the table of "force-new" input paths for bridged AWS resources from terraform-provider-aws sources.

For each (Pulumi type token, Terraform resource type) pair this finds the resource in a terraform-provider-aws
checkout, reads its schema out of the Go source with a small brace-matching parser (no Go toolchain), and lists the
inputs whose change makes the provider replace the resource:

* SDKv2 resources: schema attributes with `ForceNew: true`, at any depth of nested
  `Elem: &schema.Resource{Schema: ...}` blocks, including schemas and `*schema.Resource`s returned by helper
  functions of the same package (`Elem: fooSchema()`, `SchemaFunc: fooSchema`).
* Plugin-framework resources: attributes and blocks whose `PlanModifiers` include `RequiresReplace()` or
  `RequiresReplaceIfConfigured()`, at any depth of nested attributes/blocks.
* `region`: terraform-provider-aws v6 injects a `region` argument into every regional resource (its registration
  carries `Region: ...`) and replaces the resource when it changes; it is not in the resource's own schema.

Conditional replacement (`RequiresReplaceIf(...)`, `customdiff.ForceNewIfChange("x", ...)`, `d.ForceNew("x")` in a
CustomizeDiff) is listed separately under "conditional": whether it replaces depends on the values.

Paths are Pulumi input names: snake_case -> camelCase, dotted for nested blocks ("kubernetesNetworkConfig.ipFamily"),
and list/set attributes that are not `MaxItems: 1` (`SizeAtMost(1)` for framework blocks) get the bridge's plural
name ("initial_lifecycle_hook" -> "initialLifecycleHooks"). A child is left out when its parent already replaces.

Not handled (the parser reads literals only, it does not evaluate Go):
* schemas built imperatively (`s := map[string]*schema.Schema{}; s["x"] = ...`), merged with maps.Copy, or taken
  from another package (tftags.TagsSchema(), sdkv2.*, framework.* helpers are treated as not force-new);
* attribute names held in variables other than `names.Attr*` constants and simple package `const x = "..."`;
* Pulumi-side renames in pulumi-aws's resources.go other than the bridge's pluralisation; pass `--pulumi-sdk`
  (the installed `pulumi_aws` package directory) to check top-level names against the SDK and fix singular/plural;
* ForceNew decided at run time (CustomizeDiff code other than the two patterns above, state upgraders).

Usage:
  generate_force_new.py --source ~/src/terraform-provider-aws --tf-version v6.58.0 --pulumi-aws-version 7.51.1 \
      --types types.json [--pulumi-sdk .venv/lib/python3.12/site-packages/pulumi_aws] [--out force_new.aws.json]

types.json: {"aws:autoscaling/group:Group": "aws_autoscaling_group", ...} or [["token", "aws_type"], ...]; a list
row may carry a third element, {"tfCamelName": "pulumiName"}, for pulumi-aws renames the bridge does not derive.
Stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field

# --------------------------------------------------------------------------------------------------------------
# Go text helpers


def strip_comments(src: str) -> str:
    """Blank out // and /* */ comments (keeping strings, runes and raw strings intact), so braces inside comments
    cannot confuse the matcher. Line breaks are kept."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if c == "/" and i + 1 < n and src[i + 1] == "/":
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c == "/" and i + 1 < n and src[i + 1] == "*":
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c in "\"'`":
            j = _skip_string(src, i)
            out.append(src[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _skip_string(src: str, i: int) -> int:
    """Index just past the string/rune/raw-string literal starting at src[i]."""
    quote, j = src[i], i + 1
    while j < len(src):
        if src[j] == "\\" and quote != "`":
            j += 2
            continue
        if src[j] == quote:
            return j + 1
        j += 1
    return j


def _brackets(src: str, start: int = 0):
    """(index, character, bracket depth after it) for each character outside strings, from `start`."""
    depth, j = 0, start
    while j < len(src):
        c = src[j]
        if c in "\"'`":
            j = _skip_string(src, j)
            continue
        depth += (c in "{([") - (c in "})]")
        yield j, c, depth
        j += 1


def match_close(src: str, i: int) -> int:
    """Given src[i] an opening bracket, the index of its matching closing bracket (strings skipped)."""
    for j, c, depth in _brackets(src, i):
        if depth == 0 and c in "})]":
            return j
    raise ValueError("unbalanced brackets")


def split_top(src: str, sep: str = ",") -> list[str]:
    """Split on sep at bracket depth 0 (strings skipped); empty pieces dropped."""
    parts, start = [], 0
    for j, c, depth in _brackets(src):
        if c == sep and depth == 0:
            parts.append(src[start:j])
            start = j + 1
    parts.append(src[start:])
    return [p.strip() for p in parts if p.strip()]


def split_key_value(item: str) -> tuple[str, str] | None:
    """'Key: value' at depth 0 -> (key, value)."""
    j, depth = 0, 0
    while j < len(item):
        c = item[j]
        if c in "\"'`":
            j = _skip_string(item, j)
            continue
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
        elif c == ":" and depth == 0:
            return item[:j].strip(), item[j + 1 :].strip()
        j += 1
    return None


def literal_fields(expr: str) -> dict[str, str]:
    """The `Key: value` fields of a composite literal `Type{...}` (or a bare `{...}`)."""
    i = expr.find("{")
    if i < 0:
        return {}
    body = expr[i + 1 : match_close(expr, i)]
    fields = {}
    for item in split_top(body):
        kv = split_key_value(item)
        if kv:
            fields[kv[0]] = kv[1]
    return fields


def literal_items(expr: str) -> list[tuple[str, str]]:
    """The entries of a map literal `map[K]V{k: v, ...}` in source order."""
    i = expr.find("{", expr.find("]") + 1 if expr.startswith("map[") else 0)
    if i < 0:
        return []
    body = expr[i + 1 : match_close(expr, i)]
    return [kv for kv in (split_key_value(item) for item in split_top(body)) if kv]


# --------------------------------------------------------------------------------------------------------------
# Package index: the top-level functions, methods, types and simple string constants of one Go package directory


_FUNC_RE = re.compile(r"^func\s+(?:\(\s*\w+\s+\*?(\w+)(?:\[[^\]]*\])?\s*\)\s*)?(\w+)\s*[\[(]", re.M)
_TYPE_RE = re.compile(r"^type\s+(\w+)\s+struct\s*{", re.M)
_CONST_RE = re.compile(r"^\s*(\w+)\s*(?:\w+\s*)?=\s*\"([^\"]*)\"\s*$", re.M)


@dataclass
class Package:
    path: str
    funcs: dict[str, str] = field(default_factory=dict)  # name -> body text
    methods: dict[tuple[str, str], str] = field(default_factory=dict)  # (receiver type, name) -> body
    structs: dict[str, str] = field(default_factory=dict)  # name -> struct body
    consts: dict[str, str] = field(default_factory=dict)  # name -> string value
    vars: dict[str, str] = field(default_factory=dict)  # name -> initialiser expression (package vars)
    texts: dict[str, str] = field(default_factory=dict)  # file name -> comment-stripped text
    raw: dict[str, str] = field(default_factory=dict)  # file name -> raw text (annotations live in comments)


def load_package(directory: str) -> Package:
    pkg = Package(directory)
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".go") or name.endswith("_test.go"):
            continue
        with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as f:
            raw = f.read()
        text = strip_comments(raw)
        pkg.raw[name], pkg.texts[name] = raw, text
        for m in _FUNC_RE.finditer(text):
            # The body opens at the first '{' that ends a line after the signature.
            brace = re.compile(r"{\s*\n").search(text, m.end())
            if not brace:
                continue
            body = text[brace.start() : match_close(text, brace.start()) + 1]
            if m.group(1):
                pkg.methods[(m.group(1), m.group(2))] = body
            else:
                pkg.funcs.setdefault(m.group(2), body)
        for m in _TYPE_RE.finditer(text):
            start = m.end() - 1
            pkg.structs[m.group(1)] = text[start : match_close(text, start) + 1]
        for block in re.finditer(r"^(?:const|var)\s*\(", text, re.M):
            start = block.end() - 1
            _block_specs(text[start + 1 : match_close(text, start)], pkg)
        for c in re.finditer(r"^(?:const|var)\s+(\w+)\s*(?:[\w.*\[\]]+\s*)?=\s*", text, re.M):
            _add_spec(c.group(1), text[c.end() :], pkg)
        # Trees extracted symbol by symbol (one declaration per file, block members without their
        # `var (`/`const (` line) leave bare `name = value` lines after the imports.
        body = re.sub(r"^package\s+\w+\s*|^import\s*\([^)]*\)|^import\s+\S+", "", text, flags=re.M).strip()
        if body and not re.match(r"(func|type|var|const)\b", body):
            _block_specs(body, pkg)
    return pkg


def _block_specs(block: str, pkg: Package) -> None:
    """`name = value` specs of a var/const block (one level of indentation)."""
    for c in re.finditer(r"^\s{0,8}(\w+)\s*(?:[\w.*\[\]]+\s*)?=\s*", block, re.M):
        _add_spec(c.group(1), block[c.end() :], pkg)


def _add_spec(name: str, rest: str, pkg: Package) -> None:
    string = re.match(r'"([^"]*)"', rest)
    if string:
        pkg.consts.setdefault(name, string.group(1))
        return
    brace = re.match(r"[^\n{(]*[{(]", rest)  # a composite literal or call on the same line
    if brace:
        end = match_close(rest, brace.end() - 1)
        pkg.vars.setdefault(name, rest[: end + 1])


def load_names(source: str) -> dict[str, str]:
    """`names.AttrFoo` constants from <source>/names/*.go (attr_consts_gen.go in real checkouts)."""
    out: dict[str, str] = {}
    d = os.path.join(source, "names")
    if os.path.isdir(d):
        pkg = load_package(d)
        out.update(pkg.consts)
    return out


# Fallback for a tree without names/: AttrKMSKeyID -> kms_key_id. Acronyms are matched greedily.
_ACRONYMS = sorted(
    [
        "ARNs",
        "ARN",
        "AWS",
        "CIDR",
        "DNS",
        "EC2",
        "IDs",
        "ID",
        "IAM",
        "IPv4",
        "IPv6",
        "IP",
        "KMS",
        "S3",
        "SNS",
        "SQS",
        "URL",
        "URI",
        "VPC",
        "JSON",
        "TLS",
        "SSL",
        "HTTPS",
        "HTTP",
        "API",
        "ACL",
        "AZ",
        "EBS",
        "ECS",
        "EKS",
        "MFA",
        "OIDC",
        "TTL",
        "XML",
    ],
    key=len,
    reverse=True,
)


def attr_const_to_snake(name: str) -> str:
    words, s = [], name[len("Attr") :] if name.startswith("Attr") else name
    while s:
        for a in _ACRONYMS:
            if s.startswith(a) and (len(s) == len(a) or not s[len(a)].islower()):
                words.append(a.lower())
                s = s[len(a) :]
                break
        else:
            m = re.match(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])|.", s)
            assert m is not None  # `.` takes any other character of a name
            words.append(m.group(0).lower())
            s = s[m.end() :]
    return "_".join(words)


# --------------------------------------------------------------------------------------------------------------
# Pulumi naming


def camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def plural(name: str) -> str:
    """The bridge's plural for list/set properties (close to its inflector for the names AWS uses)."""
    if name.endswith("s"):
        return name
    if re.search(r"[^aeiou]y$", name):
        return name[:-1] + "ies"
    if re.search(r"(x|ch|sh)$", name):
        return name + "es"
    return name + "s"


# --------------------------------------------------------------------------------------------------------------
# Resolving a Terraform type to its factory


@dataclass
class Registration:
    factory: str
    framework: bool
    regional: bool
    package: Package


class Source:
    def __init__(self, root: str):
        self.root = root
        self.service_dir = os.path.join(root, "internal", "service")
        self.packages: dict[str, Package] = {}
        self.names = load_names(root)

    def package(self, service: str) -> Package:
        if service not in self.packages:
            self.packages[service] = load_package(os.path.join(self.service_dir, service))
        return self.packages[service]

    def find(self, tf_type: str) -> Registration | None:
        """Prefer the generated registration list (service_package_gen.go: `Factory: f, TypeName: "aws_x"`), which
        also says whether the resource is regional; fall back to `// @SDKResource("aws_x")` annotations."""
        quoted = f'"{tf_type}"'
        for service in sorted(os.listdir(self.service_dir)):
            d = os.path.join(self.service_dir, service)
            if not os.path.isdir(d) or not self._mentions(d, quoted):
                continue
            pkg = self.package(service)
            # Only the resource lists: the same TypeName also appears in list-resource and data-source lists.
            for (_recv, method), text in pkg.methods.items():
                if method not in ("SDKResources", "FrameworkResources"):
                    continue
                for m in re.finditer(r"TypeName:\s*" + re.escape(quoted), text):
                    start = text.rfind("{", 0, m.start())
                    element = text[start : match_close(text, start) + 1]
                    factory = re.search(r"Factory:\s*(\w+)", element)
                    if factory:
                        regional = "Region:" in element and "RegionDisabled" not in element
                        return Registration(factory.group(1), method == "FrameworkResources", regional, pkg)
            for raw in pkg.raw.values():
                marker = re.search(r"//\s*@(SDK|Framework)Resource\(\s*" + re.escape(quoted), raw)
                if marker:
                    f = re.compile(r"^func\s+(\w+)", re.M).search(raw, marker.end())
                    if f:
                        return Registration(f.group(1), marker.group(1) == "Framework", True, pkg)
        return None

    @staticmethod
    def _mentions(directory: str, needle: str) -> bool:
        for name in os.listdir(directory):
            if name.endswith(".go") and not name.endswith("_test.go"):
                with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as f:
                    if needle in f.read():
                        return True
        return False


# --------------------------------------------------------------------------------------------------------------
# Schema walking


@dataclass
class Result:
    paths: set[str] = field(default_factory=set)
    conditional: set[str] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)


class Walker:
    def __init__(self, src: Source, pkg: Package, result: Result):
        self.src, self.pkg, self.result = src, pkg, result

    # -- names
    def key_name(self, key: str) -> str | None:
        key = key.strip()
        if key.startswith('"'):
            return key.strip('"')
        if key.startswith("names."):
            const = key[len("names.") :]
            return self.src.names.get(const) or attr_const_to_snake(const)
        if key in self.pkg.consts:
            return self.pkg.consts[key]
        self.result.warnings.append(f"unresolved attribute key {key!r}")
        return None

    # -- helper resolution
    def returned_expr(self, func_name: str) -> str | None:
        body = self.pkg.funcs.get(func_name)
        if body is None:
            return None
        m = re.search(r"\breturn\s+", body)
        if not m:
            return None
        rest = body[m.end() :]
        brace = re.search(r"[{(]", rest)
        if not brace:
            return None
        return rest[: match_close(rest, brace.start()) + 1]

    def local_call(self, expr: str) -> str | None:
        """`fooSchema()` or `fooSchema` naming a function of this package -> the expression it returns."""
        m = re.fullmatch(r"&?(\w+)(\(\s*\))?", expr.strip())
        return self.returned_expr(m.group(1)) if m else None

    # -- SDKv2
    def sdk_resource(self, expr: str, prefix: str) -> None:
        """expr: a `&schema.Resource{...}` literal (or a local call returning one)."""
        expr = expr.strip()
        if not re.match(r"&?schema\.Resource\s*{", expr):
            resolved = self.local_call(expr)
            if resolved is None:
                self.result.warnings.append(f"{prefix or '<root>'}: cannot resolve resource {expr[:60]!r}")
                return
            expr = resolved
        fields = literal_fields(expr)
        schema = fields.get("Schema") or fields.get("SchemaFunc")
        if schema is None:
            self.result.warnings.append(f"{prefix or '<root>'}: no Schema in resource")
            return
        self.sdk_schema_map(schema, prefix)
        if not prefix:
            self.customize_diff(fields.get("CustomizeDiff", ""))

    def sdk_schema_map(self, expr: str, prefix: str) -> None:
        expr = expr.strip()
        if expr.startswith("func()"):
            # SchemaFunc: func() map[string]*schema.Schema { return map[...]...{...} }
            body = expr[expr.find("{", expr.find("Schema")) :]
            m = re.search(r"\breturn\s+", body)
            expr = body[m.end() :] if m else ""
        clone = re.fullmatch(r"maps\.Clone\((\w+)\)", expr)
        if clone:
            expr = clone.group(1)
        if expr in self.pkg.vars:
            expr = self.pkg.vars[expr].strip()
        if not expr.startswith("map["):
            resolved = self.local_call(expr)
            if resolved is None:
                self.result.warnings.append(f"{prefix or '<root>'}: cannot resolve schema {expr[:60]!r}")
                return
            expr = resolved
        for key, value in literal_items(expr):
            name = self.key_name(key)
            if name:
                self.sdk_attribute(name, value, prefix)

    def sdk_attribute(self, name: str, value: str, prefix: str) -> None:
        value = value.strip()
        if not (value.startswith("{") or value.startswith("&schema.Schema")):
            resolved = self.local_call(value)
            if resolved is None:  # another package's helper (tftags.TagsSchema(), ...): not force-new
                return
            value = resolved
        f = literal_fields(value)
        is_list = f.get("Type", "") in ("schema.TypeList", "schema.TypeSet") and f.get("MaxItems") != "1"
        path = prefix + (plural(camel(name)) if is_list else camel(name))
        is_input = f.get("Optional") == "true" or f.get("Required") == "true"
        if f.get("ForceNew") == "true" and is_input:
            self.result.paths.add(path)
            return  # the whole block replaces: its children add nothing
        elem = f.get("Elem", "").strip()
        if elem and not re.match(r"&?schema\.Schema\s*{", elem):
            self.sdk_resource(elem, path + ".")

    def customize_diff(self, expr: str) -> None:
        """customdiff.ForceNewIfChange("x", ...) and d.ForceNew("x") in the resource's CustomizeDiff functions."""
        texts = [expr] + [self.pkg.funcs.get(n, "") for n in re.findall(r"\b(\w+)\b", expr)]
        for text in texts:
            for m in re.finditer(r"(?:ForceNewIfChange(?:Value)?|\.ForceNew)\(\s*([\w.\"]+)", text):
                name = self.key_name(m.group(1))
                if name:  # "compute_config.0.node_role_arn" -> "computeConfig.nodeRoleArn"
                    self.result.conditional.add(".".join(camel(p) for p in name.split(".") if not p.isdigit()))

    # -- framework
    def framework_resource(self, factory: str) -> None:
        body = self.pkg.funcs.get(factory, "")
        m = re.search(r"&(\w+)\s*{", body)
        if not m:
            self.result.warnings.append(f"{factory}: no resource struct")
            return
        schema_body = self.schema_method(m.group(1))
        if schema_body is None:
            self.result.warnings.append(f"{m.group(1)}: no Schema method")
            return
        s = re.search(r"schema\.Schema\s*{", schema_body)
        if not s:
            self.result.warnings.append(f"{m.group(1)}: Schema is not a literal")
            return
        self.fw_object(schema_body[s.start() : match_close(schema_body, s.end() - 1) + 1], "")

    def schema_method(self, type_name: str, depth: int = 0) -> str | None:
        if (type_name, "Schema") in self.pkg.methods:
            return self.pkg.methods[(type_name, "Schema")]
        if depth > 3 or type_name not in self.pkg.structs:
            return None
        # Embedded structs (a bare type name on a line of the struct) lend their methods.
        for line in self.pkg.structs[type_name].strip("{}").splitlines():
            embedded = line.strip().lstrip("*")
            if re.fullmatch(r"\w+", embedded):
                found = self.schema_method(embedded, depth + 1)
                if found:
                    return found
        return None

    def fw_object(self, expr: str, prefix: str) -> None:
        """A schema.Schema / NestedBlockObject / NestedAttributeObject / Single*: its Attributes and Blocks."""
        f = literal_fields(expr)
        for kind in ("Attributes", "Blocks"):
            if kind in f:
                for key, value in literal_items(f[kind]):
                    name = self.key_name(key)
                    if name:
                        self.fw_member(name, value, prefix)

    def fw_member(self, name: str, value: str, prefix: str) -> None:
        value = value.strip()
        if not value.startswith("schema."):
            resolved = self.local_call(value)
            if resolved is None or not resolved.startswith("schema."):
                return  # framework.IDAttribute(), tftags.TagsAttribute(), ...: not replacing
            value = resolved
        kind = value[len("schema.") : value.find("{")].strip()
        f = literal_fields(value)
        single = (
            kind.startswith("Single")
            or "SizeAtMost(1)" in f.get("Validators", "")
            or "SizeBetween(0, 1)" in f.get("Validators", "")
        )
        is_list = kind.startswith(("List", "Set")) and not single
        path = prefix + (plural(camel(name)) if is_list else camel(name))
        modifiers = f.get("PlanModifiers", "")
        is_block = kind.endswith("Block")
        is_input = is_block or f.get("Optional") == "true" or f.get("Required") == "true"
        if re.search(r"\.RequiresReplace(IfConfigured)?\(\)", modifiers) and is_input:
            self.result.paths.add(path)
            return
        if ".RequiresReplaceIf(" in modifiers and is_input:
            self.result.conditional.add(path)
        nested = f.get("NestedObject")
        if nested:
            self.fw_object(nested, path + ".")
        elif kind.startswith("Single"):
            self.fw_object(value, path + ".")


# --------------------------------------------------------------------------------------------------------------
# Optional check against the installed Pulumi SDK


def sdk_properties(sdk_dir: str, token: str) -> set[str] | None:
    """Top-level input/output names (camelCase) of the resource class whose token is given, from pulumi_aws."""
    mod = token.split(":")[1].split("/")[0]
    d = os.path.join(sdk_dir, mod)
    if not os.path.isdir(d):
        return None
    for name in os.listdir(d):
        if not name.endswith(".py") or name.startswith("_"):
            continue
        with open(os.path.join(d, name), encoding="utf-8") as f:
            text = f.read()
        if not re.search(r"__init__\(\s*'" + re.escape(token) + r"',\s*resource_name", text):
            continue  # (v2 classes mention the new token as an alias)
        props = set()
        for m in re.finditer(r'@pulumi\.getter(?:\(name="(\w+)"\))?\s*\n(?:\s*@.*\n)*\s*def (\w+)\(', text):
            props.add(m.group(1) or m.group(2))
        return props
    return None


def fix_names(paths: set[str], props: set[str], warnings: list[str]) -> set[str]:
    out = set()
    for p in paths:
        head, dot, rest = p.partition(".")
        if head not in props:
            for alt in (
                plural(head),
                head[:-1] if head.endswith("s") else None,
                head[:-3] + "y" if head.endswith("ies") else None,
            ):
                if alt and alt in props:
                    warnings.append(f"{head} -> {alt} (named so in the Pulumi SDK)")
                    head = alt
                    break
            else:
                warnings.append(f"{head}: not a property of the Pulumi SDK class")
        out.add(head + dot + rest)
    return out


# --------------------------------------------------------------------------------------------------------------


def drop_covered(paths: set[str]) -> list[str]:
    """Sorted, without paths whose ancestor is already listed."""
    return sorted(p for p in paths if not any(p.startswith(q + ".") for q in paths if q != p))


def load_types(path: str) -> list[tuple[str, str, dict[str, str]]]:
    """[(token, terraform_type, renames)]; renames maps a top-level camelCase name to the name pulumi-aws's
    resources.go gives it (e.g. aws_sns_topic_subscription topicArn -> topic), from an optional third element."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    rows = [[k, v] for k, v in data.items()] if isinstance(data, dict) else data
    return [(row[0], row[1], row[2] if len(row) > 2 else {}) for row in rows]


def rename(paths: set[str], renames: dict[str, str]) -> set[str]:
    out = set()
    for p in paths:
        head, dot, rest = p.partition(".")
        out.add(renames.get(head, head) + dot + rest)
    return out


def source_commit(root: str) -> str:
    try:
        return subprocess.run(
            ["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", required=True, help="terraform-provider-aws checkout")
    ap.add_argument("--tf-version", required=True, help="the checkout's tag, e.g. v6.58.0")
    ap.add_argument("--pulumi-aws-version", required=True)
    ap.add_argument("--types", required=True, help="JSON: {token: terraform_type} or [[token, terraform_type]]")
    ap.add_argument("--source-commit", help="recorded as source_commit (default: git rev-parse HEAD of --source)")
    ap.add_argument("--pulumi-sdk", help="pulumi_aws package directory, to check top-level names")
    ap.add_argument("--out", help="output file (default: stdout)")
    args = ap.parse_args(argv)

    src = Source(args.source)
    types, conditional, problems = {}, {}, {}
    for token, tf_type, renames in load_types(args.types):
        result = Result()
        reg = src.find(tf_type)
        if reg is None:
            problems[token] = [f"{tf_type}: not found in {src.service_dir}"]
            continue
        walker = Walker(src, reg.package, result)
        if reg.framework:
            walker.framework_resource(reg.factory)
        else:
            walker.sdk_resource(reg.factory + "()", "")
        if reg.regional:
            result.paths.add("region")
        paths, cond = rename(result.paths, renames), rename(result.conditional - result.paths, renames)
        if args.pulumi_sdk:
            props = sdk_properties(args.pulumi_sdk, token)
            if props is None:
                result.warnings.append("token not found in the Pulumi SDK")
            else:
                paths, cond = fix_names(paths, props, result.warnings), fix_names(cond, props, result.warnings)
        types[token] = drop_covered(paths)
        if cond:
            conditional[token] = sorted(cond)
        if result.warnings:
            problems[token] = sorted(set(result.warnings))

    out = {
        "generated_by": "scripts/generate_force_new.py",
        "pulumi-aws": args.pulumi_aws_version,
        "terraform-provider-aws": args.tf_version,
        "source_commit": args.source_commit or source_commit(args.source),
        "types": dict(sorted(types.items())),
        "conditional": dict(sorted(conditional.items())),
    }
    text = json.dumps(out, indent=2) + "\n"
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    for token, msgs in sorted(problems.items()):
        for msg in msgs:
            print(f"warning: {token}: {msg}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
