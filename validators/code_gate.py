"""Static gate on environment code, before it reaches any sandbox.

Tool handlers must be pure functions over a JSON state. The gate parses the module and rejects
anything that reaches beyond that: imports outside a short list of pure modules, the builtins that
run code or touch files (eval, exec, open, __import__, ...), reflection (getattr, globals, ...) and
any dunder name or attribute (the usual way out of a restricted namespace). It is a first filter,
not the isolation boundary: the sandbox still contains whatever slips through.
"""

from __future__ import annotations

import ast

from abstaingen.model import CheckResult, EnvironmentBundle

CHECK = "code_gate"

PURE_MODULES = frozenset({
    "math", "re", "json", "datetime", "decimal", "fractions", "itertools", "functools", "collections",
    "statistics", "string", "copy", "typing", "dataclasses", "enum", "operator", "bisect", "heapq",
})
FORBIDDEN_NAMES = frozenset({
    "eval", "exec", "compile", "open", "__import__", "globals", "locals", "vars", "getattr", "setattr",
    "delattr", "breakpoint", "input", "help", "memoryview", "exit", "quit", "classmethod", "staticmethod",
    "super", "object", "type",
})


class _Inspector(ast.NodeVisitor):
    def __init__(self) -> None:
        self.problems: list[str] = []

    def _flag(self, node: ast.AST, message: str) -> None:
        self.problems.append(f"line {getattr(node, 'lineno', '?')}: {message}")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] not in PURE_MODULES:
                self._flag(node, f"import of {alias.name!r} is not allowed")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or (node.module or "").split(".")[0] not in PURE_MODULES:
            self._flag(node, f"import from {node.module!r} is not allowed")

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in FORBIDDEN_NAMES or node.id.startswith("__"):
            self._flag(node, f"use of {node.id!r} is not allowed")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("__"):
            self._flag(node, f"dunder attribute {node.attr!r} is not allowed")
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if node.name.startswith("__"):
            self._flag(node, f"dunder function {node.name!r} is not allowed")
        self.generic_visit(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._flag(node, "async functions are not allowed")

    def visit_Global(self, node: ast.Global) -> None:
        self._flag(node, "global state is not allowed: tools must work on the state they are given")

    visit_Nonlocal = visit_Global  # type: ignore[assignment]


def inspect_source(source: str, tool_names: list[str]) -> list[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [f"line {exc.lineno}: syntax error: {exc.msg}"]
    inspector = _Inspector()
    inspector.visit(tree)
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    missing = sorted(set(tool_names) - defined)
    if missing:
        inspector.problems.append(f"no top-level function for tools {missing}")
    return inspector.problems


def check_code(bundle: EnvironmentBundle) -> CheckResult:
    problems = inspect_source(bundle.implementation, [t.name for t in bundle.tools])
    return CheckResult(name=CHECK, passed=not problems, detail="; ".join(problems[:10]) or "ok")
