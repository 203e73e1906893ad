#!/usr/bin/env python3
"""Generate the table of Kubernetes fields whose change makes pulumi-kubernetes replace an object, from the
provider's own source: `provider/pkg/provider/diff.go`.

That file holds the table as Go values (`var forceNew = _groups{...}`, `var core = _versions{...}`, helper
`var`s built with `append(...)`, and three helper functions that prefix field names), and
`forceNewProperties` adds two branches: a Secret's `.type`, `.stringData` and `.data` replace it unless
the provider's `enableSecretMutable` is on, and a ConfigMap's `.binaryData` and `.data` unless
`enableConfigMapMutable` is (both off by default: provider.go). This reads the literals with a small
evaluator of exactly the Go used there (composite literals, string concatenation, `append(a, b...)`,
calls of the file's own functions with `return`, `var` and `for ... range` bodies); anything else fails
loudly, so a rewritten source is read again rather than misread.

Paths are the provider's (`.spec.containers[*].image`) without the leading dot; kinds are keyed
`<group>/<version>:<Kind>` with the core group as `core`, as Pulumi's type tokens spell them.

Usage:
  generate_force_new_kubernetes.py --diff-go diff.go --source "pulumi/pulumi-kubernetes@<commit> (<tag>)" \
      --pulumi-kubernetes-version 4.34.2 [--out components/plan/data/force_new.kubernetes.json]
Stdlib only.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from generated_table import write_table

TOKEN = re.compile(
    r'\s+|//[^\n]*|/\*.*?\*/|"(?:[^"\\]|\\.)*"|\.\.\.|:=|&&|\|\||[!=]=|[A-Za-z_][A-Za-z0-9_.]*|[{}()\[\],:;+*=!<>&]',
    re.S,
)


class SourceChanged(Exception):
    """diff.go holds Go this reader does not know: read the source again and extend the reader."""


def tokens(text: str) -> list[str]:
    found, at = [], 0
    while at < len(text):
        match = TOKEN.match(text, at)
        if not match:
            raise SourceChanged(f"unexpected text at offset {at}: {text[at : at + 40]!r}")
        token = match.group()
        if not (token.isspace() or token.startswith("//") or token.startswith("/*")):
            found.append(token)
        at = match.end()
    return found


class GoFile:
    """The top-level `var`s and `func`s of one file, evaluated on demand."""

    def __init__(self, text: str):
        self.tokens = tokens(text)
        self.vars: dict[str, tuple[int, int]] = {}
        self.funcs: dict[str, tuple[list[str], bool, int, int]] = {}
        self.values: dict[str, Any] = {}
        self._index()

    def _matching(self, at: int) -> int:
        """The index of the bracket closing the one at `at`."""
        pairs = {"{": "}", "(": ")", "[": "]"}
        depth, opener = 0, self.tokens[at]
        for index in range(at, len(self.tokens)):
            if self.tokens[index] == opener:
                depth += 1
            elif self.tokens[index] == pairs[opener]:
                depth -= 1
                if depth == 0:
                    return index
        raise SourceChanged(f"unbalanced {opener}")

    def _index(self) -> None:
        at, toks = 0, self.tokens
        while at < len(toks):
            if toks[at] == "var" and toks[at + 2] == "=":
                end = self._expression_end(at + 3)
                self.vars[toks[at + 1]] = (at + 3, end)
                at = end
            elif toks[at] == "func" and toks[at + 1] != "(":
                name, params_at = toks[at + 1], at + 2
                params_end = self._matching(params_at)
                params = [
                    toks[i]
                    for i in range(params_at + 1, params_end)
                    if toks[i] not in (",", "string", "...") and toks[i - 1] in ("(", ",")
                ]
                variadic = "..." in toks[params_at:params_end]
                body_at = params_end + 1
                while toks[body_at] != "{":
                    body_at += 1
                body_end = self._matching(body_at)
                self.funcs[name] = (params, variadic, body_at + 1, body_end)
                at = body_end + 1
            elif toks[at] == "func":  # a method: its body is not part of the table
                body_at = at
                while toks[body_at] != "{":
                    body_at = self._matching(body_at) if toks[body_at] == "(" else body_at + 1
                at = self._matching(body_at) + 1
            else:
                at += 1

    def _expression_end(self, at: int) -> int:
        """Where the expression starting at `at` ends (the next top-level token that cannot continue it)."""
        while True:
            at = self._term_end(at)
            if at < len(self.tokens) and self.tokens[at] == "+":
                at += 1
                continue
            return at

    def _term_end(self, at: int) -> int:
        token = self.tokens[at]
        at += 1
        if token.startswith('"'):
            return at
        if at < len(self.tokens) and self.tokens[at] in ("{", "("):
            return self._matching(at) + 1
        return at

    def value(self, name: str) -> Any:
        if name not in self.values:
            if name not in self.vars:
                raise SourceChanged(f"{name} is not a top-level var of the file")
            start, end = self.vars[name]
            self.values[name] = self.evaluate(start, end, {})
        return self.values[name]

    def evaluate(self, start: int, end: int, scope: dict[str, Any]) -> Any:
        """The expression tokens[start:end]: a sum of terms (string concatenation)."""
        parts, at = [], start
        while at < end:
            term_end = self._term_end(at)
            parts.append(self._term(at, term_end, scope))
            at = term_end
            if at < end:
                if self.tokens[at] != "+":
                    raise SourceChanged(f"expected + at {self.tokens[at]!r}")
                at += 1
        if len(parts) == 1:
            return parts[0]
        if not all(isinstance(p, str) for p in parts):
            raise SourceChanged("+ of something other than strings")
        return "".join(parts)

    def _term(self, start: int, end: int, scope: dict[str, Any]) -> Any:
        token = self.tokens[start]
        if token.startswith('"'):
            return json.loads(token)
        if end == start + 1:
            return scope[token] if token in scope else self.value(token)
        opener = self.tokens[start + 1]
        arguments = self._split(start + 2, end - 1)
        if opener == "{":  # a composite literal: keyed (a map) or not (a slice)
            keyed = [self._key_value(a, b, scope) for a, b in arguments]
            if all(k is not None for k, _ in keyed):
                return {k: v for k, v in keyed}
            if any(k is not None for k, _ in keyed):
                raise SourceChanged(f"{token}{{...}} mixes keyed and unkeyed elements")
            return [v for _, v in keyed]
        if token == "append":
            (first_start, first_end), *rest = arguments
            result = list(self.evaluate(first_start, first_end, scope))
            for arg_start, arg_end in rest:
                if self.tokens[arg_end - 1] == "...":
                    result.extend(self.evaluate(arg_start, arg_end - 1, scope))
                else:
                    result.append(self.evaluate(arg_start, arg_end, scope))
            return result
        if token in self.funcs:
            return self.call(token, [self.evaluate(a, b, scope) for a, b in arguments])
        raise SourceChanged(f"a call of {token}, which the file does not define")

    def _key_value(self, start: int, end: int, scope: dict[str, Any]) -> tuple[Any, Any]:
        for at in range(start, end):
            if self.tokens[at] == ":" and at == start + 1:
                return self.evaluate(start, at, scope), self.evaluate(at + 1, end, scope)
        return None, self.evaluate(start, end, scope)

    def _split(self, start: int, end: int) -> list[tuple[int, int]]:
        """The comma-separated elements of tokens[start:end], each as (start, end)."""
        elements, at, element_start = [], start, start
        while at < end:
            if self.tokens[at] in ("{", "(", "["):
                at = self._matching(at) + 1
                continue
            if self.tokens[at] == ",":
                elements.append((element_start, at))
                element_start = at + 1
            at += 1
        if element_start < end:
            elements.append((element_start, end))
        return elements

    def call(self, name: str, arguments: list[Any]) -> Any:
        params, variadic, start, end = self.funcs[name]
        if len(params) != 1 or len(arguments) < 1:
            raise SourceChanged(f"{name} takes other parameters than one (variadic) string")
        scope = {params[0]: arguments if variadic else arguments[0]}
        return self._run(start, end, scope)

    def _run(self, start: int, end: int, scope: dict[str, Any]) -> Any:
        """A function body of `var x T`, `x = expr`, `for _, v := range xs { ... }` and `return expr`."""
        at = start
        while at < end:
            token = self.tokens[at]
            if token == "var":  # `var props properties`: the zero value, an empty list
                scope[self.tokens[at + 1]] = []
                at += 3
            elif token == "return":
                return self.evaluate(at + 1, self._expression_end(at + 1), scope)
            elif token == "for":
                if [self.tokens[at + i] for i in (1, 2, 4, 5, 7)] != ["_", ",", ":=", "range", "{"]:
                    raise SourceChanged("a for loop other than `for _, v := range xs {`")
                variable, iterable = self.tokens[at + 3], self.tokens[at + 6]
                body_end = self._matching(at + 7)
                for item in scope[iterable]:
                    scope[variable] = item  # one scope: the body's assignments are to the function's list
                    self._run(at + 8, body_end, scope)
                at = body_end + 1
            elif self.tokens[at + 1] == "=":
                expression_end = self._expression_end(at + 2)
                scope[token] = self.evaluate(at + 2, expression_end, scope)
                at = expression_end
            else:
                raise SourceChanged(f"a statement starting {token!r}")
        return None


def table(text: str) -> dict[str, Any]:
    go = GoFile(text)
    every_kind = [p.lstrip(".") for p in go.call("metadataForceNewProperties", [".metadata"])]
    kinds: dict[str, list[str]] = {}
    for group, versions in go.value("forceNew").items():
        for version, by_kind in versions.items():
            for kind, paths in by_kind.items():
                token = f"{group or 'core'}/{version}:{kind}"
                kinds[token] = sorted({p.lstrip(".") for p in paths})
    method = re.search(r"func \(k \*kubeProvider\) forceNewProperties\(.*?\n}\n", text, re.S)
    if not method:
        raise SourceChanged("forceNewProperties is not where it was")
    defaults: dict[str, list[str]] = {}
    for check, kind, flag in (
        ("IsSecret", "Secret", "enableSecretMutable"),
        ("IsConfigMap", "ConfigMap", "enableConfigMapMutable"),
    ):
        branch = re.search(
            rf"clients\.{check}\(obj\) && \(!k\.{flag} \|\| clients\.IsImmutable\(obj\)\) \{{\s*"
            r"props = append\(props, properties\{([^}]*)\}\.\.\.\)",
            method.group(),
        )
        if not branch:
            raise SourceChanged(f"the {kind} branch of forceNewProperties changed")
        defaults[f"core/v1:{kind}"] = sorted(json.loads(s).lstrip(".") for s in re.findall(r'"[^"]*"', branch.group(1)))
    return {"every_kind": every_kind, "kinds": dict(sorted(kinds.items())), "unless_mutable": defaults}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--diff-go", type=Path, required=True, help="provider/pkg/provider/diff.go at the read tag")
    parser.add_argument("--source", required=True, help="where it was read: repository@commit (tag)")
    parser.add_argument("--pulumi-kubernetes-version", required=True, help="the pin in pyproject.toml")
    parser.add_argument("--out", type=Path, help="default: standard output")
    args = parser.parse_args(argv)
    try:
        generated = table(args.diff_go.read_text())
    except SourceChanged as error:
        print(f"generate_force_new_kubernetes: {error}", file=sys.stderr)
        return 2
    document = {
        "generated_by": "scripts/generate_force_new_kubernetes.py",
        "pulumi-kubernetes": args.pulumi_kubernetes_version,
        "source": args.source,
        **generated,
    }
    return write_table(document, args.out, indent=2)


if __name__ == "__main__":
    sys.exit(main())
