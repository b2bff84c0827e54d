"""Static gate on environment code: a cheap first filter before any sandbox, not the boundary.

Tool handlers must be pure functions over a JSON state. The gate parses the module and rejects
anything that reaches beyond that; whatever slips through is still contained by the sandbox, which
is the isolation boundary. The rules are few and apply everywhere, rather than one per known trick:

- imports: only the short list of pure modules in PURE_MODULES, as `import m [as a]` or
  `from m import name`; a module's members are its public `__all__` (or public names) minus the
  denied names below and minus anything that is itself a module (`typing.sys`, `json.decoder`);
- a name bound to a module may only be read as `module.member`: never passed, stored, aliased,
  subscripted or assigned to (`m = typing`, `f(m=typing)`, `typing.x = 1`);
- attributes (including `case C(attr=...)` in `match`): none starting with `_` (dunders, private
  module handles such as `collections._sys`), none of the frame, code, generator and traceback
  families (`gi_frame`, `f_globals`, `co_code`, `tb_frame`, ...), none in DENIED_NAMES;
- names: not the builtins that run code, read files, reflect or quit, nor `hash` and `id`, whose results
  differ between processes (FORBIDDEN_NAMES); no dunders; no clock (`now`, `today`, `utcnow`);
- a string does not get to name an attribute: the helpers that look attributes up by string or evaluate
  strings are denied (attrgetter, methodcaller, Formatter, get_type_hints, ForwardRef, ...),
  `.format`/`.format_map` only on a string literal whose fields are plain names or positions, and
  no string constant contains a dunder identifier;
- no positional class patterns (`case C(p)` reads the attribute `C.__match_args__` names, a string
  built at run time) except the builtins that match themselves (`case str(s)`), whose names cannot be
  rebound; no helper that hands out `type` (`typing.get_origin(typing.Type)`), so no class is built at
  run time; no string or bytes constant names a dunder;
- no async code, no `global`/`nonlocal`, no class keywords (`metaclass=`), no imports in a class
  body (they would make a module a class attribute), no dunder definitions or bindings.

A string built at run time can still spell a dunder; the rules above leave it nothing that would look
an attribute up by it. The sandbox, not this gate, is the wall.
"""

from __future__ import annotations

import ast
import importlib
import re
import string
from functools import cache
from types import ModuleType

from abstaingen.model import CheckResult, EnvironmentBundle

CHECK = "code_gate"

# dataclasses and enum are left out: no builtin environment uses them, and they bring class
# factories that exec generated source and metaclass machinery for no gain to a JSON handler.
PURE_MODULES = frozenset({
    "math", "re", "json", "datetime", "decimal", "fractions", "itertools", "functools", "collections",
    "statistics", "string", "copy", "typing", "operator", "bisect", "heapq",
})
FORBIDDEN_NAMES = frozenset({
    "eval", "exec", "compile", "open", "__import__", "globals", "locals", "vars", "dir", "getattr", "setattr",
    "delattr", "hasattr", "breakpoint", "input", "help", "license", "credits", "copyright", "memoryview",
    "exit", "quit", "classmethod", "staticmethod", "super", "object", "type",
    # results that differ from one process to the next: a handler must be a function of its state
    "hash", "id",
    # raised, these stop the sandbox's server instead of failing one call
    "BaseException", "BaseExceptionGroup", "SystemExit", "KeyboardInterrupt", "GeneratorExit",
})
# Denied as an attribute, a module member, an imported name or a match keyword, whatever the object.
DENIED_NAMES = frozenset({
    # look attributes up by a string
    "attrgetter", "methodcaller", "Formatter", "vformat", "get_field", "update_wrapper", "wraps",
    # evaluate strings (annotations) or exec generated source
    "get_type_hints", "ForwardRef", "singledispatch", "singledispatchmethod", "namedtuple", "NamedTuple",
    "make_dataclass",
    # the clock: a result that depends on when it runs fails replay later (datetime.now, date.today)
    "now", "today", "utcnow",
    # introspection, and the typing helpers that hand out classes such as `type` itself
    "mro", "cell_contents", "get_origin", "get_args",
    # what an escape is after, should anything still hand out a module or the builtins
    "sys", "os", "builtins", "modules", "importlib", "subprocess",
    "eval", "exec", "open", "getattr", "setattr", "delattr", "globals", "locals", "vars", "breakpoint", "input",
})
# frames (f_globals, f_back, ...), generators, coroutines, async generators, code objects, tracebacks
INTROSPECTION_PREFIXES = ("f_", "gi_", "cr_", "ag_", "co_", "tb_")
FORMAT_METHODS = frozenset({"format", "format_map"})
PLAIN_FIELD = re.compile(r"\w*")  # '{}', '{0}', '{name}': no '.attr', no '[key]'
DUNDER_IN_STRING = re.compile(r"__\w+__")
DUNDER_IN_BYTES = re.compile(rb"__\w+__")
# Builtins whose class pattern takes one positional pattern matched against the subject itself.
SELF_MATCHING = frozenset({"bool", "bytearray", "bytes", "dict", "float", "frozenset", "int", "list", "set", "str",
                           "tuple"})


def attribute_problem(name: str) -> str | None:
    """Why `obj.<name>` is rejected on any object, or None."""
    if name.startswith("_"):
        return f"attribute {name!r} is not allowed: names starting with '_' are private or dunder"
    if name.startswith(INTROSPECTION_PREFIXES) or name in DENIED_NAMES:
        return f"attribute {name!r} is not allowed: it reaches frames, code, modules or attributes by name"
    return None


@cache
def module_members(module: str) -> frozenset[str]:
    """The names `module.<name>` and `from module import <name>` may use."""
    mod = importlib.import_module(module)
    public = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
    return frozenset(n for n in public
                     if attribute_problem(n) is None and not isinstance(getattr(mod, n, None), ModuleType))


def plain_format(template: str) -> bool:
    """True when str.format on this template only reads its arguments, never their attributes or items."""
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError:
        return False
    return all((field is None or PLAIN_FIELD.fullmatch(field)) and (not spec or plain_format(spec))
               for _, field, spec, _ in fields)


class _Inspector:
    def __init__(self, tree: ast.Module) -> None:
        self.problems: list[str] = []
        self.parents: dict[ast.AST, ast.AST] = {}
        self.nodes: list[ast.AST] = []
        for node in ast.walk(tree):  # iterative: a deeply nested module cannot overflow the stack here
            self.nodes.append(node)
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
        self.module_names: dict[str, set[str]] = {}  # name -> the modules an import binds to it
        for node in self.nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:  # `import a.b` binds a, `import a.b as c` binds c to a.b
                    bound = alias.asname or alias.name.split(".")[0]
                    self.module_names.setdefault(bound, set()).add(alias.name if alias.asname else bound)

    def run(self) -> list[str]:
        for node in self.nodes:
            visit = getattr(self, f"visit_{type(node).__name__}", None)
            if visit is not None:
                visit(node)
            for name in _bound_identifiers(node):
                if name.startswith("__"):
                    self._flag(node, f"dunder name {name!r} is not allowed")
                elif name in SELF_MATCHING:
                    self._flag(node, f"the builtin {name!r} may not be rebound")
        return self.problems

    def _flag(self, node: ast.AST, message: str) -> None:
        self.problems.append(f"line {getattr(node, 'lineno', '?')}: {message}")

    def visit_Import(self, node: ast.Import) -> None:
        self._not_in_a_class_body(node)
        for alias in node.names:
            if alias.name not in PURE_MODULES:
                self._flag(node, f"import of {alias.name!r} is not allowed")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self._not_in_a_class_body(node)
        module = node.module or ""
        if node.level or module not in PURE_MODULES:
            self._flag(node, f"import from {node.module!r} is not allowed")
            return
        for alias in node.names:
            if alias.name not in module_members(module):
                self._flag(node, f"import of {module}.{alias.name} is not allowed")

    def _not_in_a_class_body(self, node: ast.Import | ast.ImportFrom) -> None:
        scope = self.parents.get(node)
        while scope is not None and not isinstance(scope, ast.FunctionDef | ast.Lambda | ast.ClassDef):
            scope = self.parents.get(scope)
        if isinstance(scope, ast.ClassDef):  # it would make the module a class attribute: C.typing.functools
            self._flag(node, "imports inside a class body are not allowed")

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in FORBIDDEN_NAMES or node.id.startswith("__"):
            self._flag(node, f"use of {node.id!r} is not allowed, not even as a parameter or variable name: rename it")
        elif node.id in SELF_MATCHING and not isinstance(node.ctx, ast.Load):
            self._flag(node, f"the builtin {node.id!r} may not be rebound")
        elif node.id in self.module_names:
            parent = self.parents.get(node)
            if not (isinstance(parent, ast.Attribute) and parent.value is node):
                self._flag(node, f"module {node.id!r} may only be used as {node.id}.<member>")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        problem = attribute_problem(node.attr)
        if problem:
            self._flag(node, problem)
        elif node.attr in FORMAT_METHODS:
            literal = node.value
            if not (isinstance(literal, ast.Constant) and isinstance(literal.value, str)
                    and plain_format(literal.value)):
                self._flag(node, f".{node.attr} is only allowed on a string literal with plain fields "
                                 "('{}', '{0}', '{name}'); use an f-string")
        if isinstance(node.value, ast.Name) and node.value.id in self.module_names:
            for module in sorted(self.module_names[node.value.id]):
                if module in PURE_MODULES and node.attr not in module_members(module) and not problem:
                    self._flag(node, f"{module}.{node.attr} is not allowed")
        self._no_store_into_module(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self._no_store_into_module(node)

    def _no_store_into_module(self, node: ast.Attribute | ast.Subscript) -> None:
        if isinstance(node.ctx, ast.Load):
            return
        root: ast.expr = node
        while isinstance(root, ast.Attribute | ast.Subscript):
            root = root.value
        if isinstance(root, ast.Name) and root.id in self.module_names:
            self._flag(node, f"module {root.id!r} is read-only")

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        self_matching = isinstance(node.cls, ast.Name) and node.cls.id in SELF_MATCHING and len(node.patterns) == 1
        if node.patterns and not self_matching:  # `case C(p)` reads the attribute C.__match_args__[0] names
            self._flag(node, "positional class patterns are only allowed on builtins that match themselves "
                             "(`case str(s)`); name the attribute: `case C(attr=p)`")
        for name in node.kwd_attrs:  # `case C(attr=p)` reads subject.attr
            problem = attribute_problem(name)
            if problem:
                self._flag(node, f"match keyword: {problem}")

    def visit_Constant(self, node: ast.Constant) -> None:
        if (isinstance(node.value, str) and DUNDER_IN_STRING.search(node.value)) or (
                isinstance(node.value, bytes) and DUNDER_IN_BYTES.search(node.value)):
            self._flag(node, f"a string naming a dunder is not allowed: {node.value[:40]!r}")

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if node.keywords:
            self._flag(node, "class keywords (metaclass=...) are not allowed")

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._flag(node, "async functions are not allowed")

    def visit_Await(self, node: ast.Await) -> None:
        self._flag(node, "async code is not allowed")

    visit_AsyncFor = visit_AsyncWith = visit_Await

    def visit_comprehension(self, node: ast.comprehension) -> None:
        if node.is_async:
            self._flag(self.parents.get(node, node), "async code is not allowed")

    def visit_Global(self, node: ast.Global) -> None:
        self._flag(node, "global state is not allowed: tools must work on the state they are given")

    visit_Nonlocal = visit_Global


def _bound_identifiers(node: ast.AST) -> list[str]:
    """The identifiers a node binds other than through ast.Name (definitions, parameters, aliases, captures)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.alias):
        return [node.asname] if node.asname else []
    if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
        return [node.name] if node.name else []
    if isinstance(node, ast.MatchMapping):
        return [node.rest] if node.rest else []
    return []


def inspect_source(source: str, tool_names: list[str]) -> list[str]:
    try:
        tree = ast.parse(source)
        problems = _Inspector(tree).run()
    except SyntaxError as exc:
        return [f"line {exc.lineno or '?'}: syntax error: {exc.msg}"]
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting: not a handler
        return [f"line ?: cannot be parsed: {type(exc).__name__}"]
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    missing = sorted(set(tool_names) - defined)
    if missing:
        problems.append(f"no top-level function for tools {missing}")
    return problems


def check_code(bundle: EnvironmentBundle) -> CheckResult:
    if bundle.origin == "imported":  # someone else's Python, imports and classes and all: the gate's rules are for
        # handlers written to our form; the sandbox policy keeps imported code in an isolating sandbox. An
        # overlay's code is ours (a model's), and gated like any
        if bundle.overlay is None:
            return CheckResult(name=CHECK, passed=True, detail="imported code is not gated: it runs only in an "
                                                               "isolating sandbox")
        problems = inspect_source(bundle.overlay.implementation, bundle.overlay.tools)
        return CheckResult(name=CHECK, passed=not problems, detail="; ".join(problems[:10]) or
                           "the overlay's code passed; imported code is not gated: it runs only in an isolating sandbox")
    problems = inspect_source(bundle.implementation, [t.name for t in bundle.tools])
    return CheckResult(name=CHECK, passed=not problems, detail="; ".join(problems[:10]) or "ok")
