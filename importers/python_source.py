"""What the importers read from someone else's Python without running it: a parameter's JSON Schema from its
annotation, a docstring's summary and `Args:`, a function as a tool, and example calls taken from the state's
fields."""

from __future__ import annotations

import ast
import re

from abstaingen.model import JsonValue, ToolKind, ToolSpec

_SCALARS = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}


def annotation_schema(annotation: ast.expr | None) -> dict[str, JsonValue]:
    """A JSON Schema for a parameter's annotation, as far as its text tells; {} (anything) for a model class."""
    if annotation is None:
        return {}
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):  # a string annotation
        return annotation_schema(ast.parse(annotation.value, mode="eval").body)
    if isinstance(annotation, ast.Name):
        if annotation.id in _SCALARS:
            return {"type": _SCALARS[annotation.id]}
        return {"type": "object"} if annotation.id in ("dict", "Dict") else {"type": "array"} if annotation.id in (
            "list", "List") else {}
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):  # X | None
        parts = [annotation_schema(side) for side in (annotation.left, annotation.right)
                 if not (isinstance(side, ast.Constant) and side.value is None)]
        return parts[0] if len(parts) == 1 else {}
    if isinstance(annotation, ast.Subscript) and isinstance(annotation.value, ast.Name):
        outer, inner = annotation.value.id, annotation.slice
        items = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        if outer in ("List", "list", "Sequence"):
            return {"type": "array", "items": annotation_schema(items[0])}
        if outer in ("Dict", "dict"):
            return {"type": "object"}
        if outer == "Annotated":  # Annotated[str, Field(description="...")]
            schema = annotation_schema(items[0])
            described = [kw.value.value for item in items[1:] if isinstance(item, ast.Call) for kw in item.keywords
                         if kw.arg == "description" and isinstance(kw.value, ast.Constant)
                         and isinstance(kw.value.value, str)]
            return {**schema, "description": described[0]} if described else schema
        if outer == "Optional":
            return annotation_schema(items[0])
        if outer == "Union":
            parts = [annotation_schema(item) for item in items if not (isinstance(item, ast.Constant) and item.value is None)]
            return parts[0] if len(parts) == 1 else {}
        values = [item.value for item in items if isinstance(item, ast.Constant)]
        if outer == "Literal" and len(values) == len(items) and all(isinstance(v, str | int | float) for v in values):
            return {"enum": [v for v in values if isinstance(v, str | int | float)]}
    return {}


def docstring_parts(docstring: str) -> tuple[str, dict[str, str]]:
    """The docstring's first paragraph, and each argument's text from its `Args:` section."""
    paragraphs = re.split(r"\n\s*\n", docstring.strip())
    summary = " ".join(paragraphs[0].split()) if paragraphs and not paragraphs[0].lstrip().startswith("Args:") else ""
    args: dict[str, str] = {}
    section = re.search(r"^\s*Args:\s*\n(.*?)(?=^\s*(?:Returns|Raises|Yields|Example)s?:|\Z)", docstring, re.S | re.M)
    if section:
        name = None
        for line in section.group(1).splitlines():
            if match := re.match(r"\s*(\w+)\s*(?:\([^)]*\))?:\s*(.*)", line):
                name, args[match.group(1)] = match.group(1), match.group(2).strip()
            elif name and line.strip():
                args[name] += " " + line.strip()
    return summary, args


def function_tool(function: ast.FunctionDef | ast.AsyncFunctionDef, kind: ToolKind, name: str | None = None,
                  description: str | None = None, skipped: frozenset[str] = frozenset({"self"})) -> ToolSpec:
    """A function as a tool (without examples): its arguments' schemas from their annotations and the docstring's
    `Args:`, those without a default required; its description given, else the docstring's summary."""
    summary, described = docstring_parts(ast.get_docstring(function) or "")
    arguments = function.args
    params = [p for p in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs] if p.arg not in skipped]
    positional = [*arguments.posonlyargs, *arguments.args]
    defaulted = {p.arg for p in positional[len(positional) - len(arguments.defaults):]}
    defaulted |= {p.arg for p, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if d is not None}
    properties: dict[str, JsonValue] = {}
    for param in params:
        schema = annotation_schema(param.annotation)
        if param.arg in described:
            schema["description"] = described[param.arg]
        properties[param.arg] = schema
    required: list[JsonValue] = [p.arg for p in params if p.arg not in defaulted]
    name = name or function.name
    return ToolSpec(name=name, description=description or summary or name.replace("_", " "), kind=kind,
                    input_schema={"type": "object", "properties": properties, "required": required,
                                  "additionalProperties": False})


def examples_from_state(tools: list[ToolSpec], state: dict[str, JsonValue]) -> dict[str, dict[str, JsonValue]]:
    """For a tool the tasks never call, arguments taken from the state: each required argument the value of the
    field of that name in the first record that has it ("customer_id", "phone_number"; a record of a collection,
    or an object the state holds, such as a profile); no arguments for a tool that requires none; none when an
    argument names no field."""
    first: dict[str, JsonValue] = {}
    for entry in state.values():
        for record in entry if isinstance(entry, list) else [entry]:
            if isinstance(record, dict):
                for field, value in record.items():
                    if isinstance(value, str | int | float) and not isinstance(value, bool):
                        first.setdefault(field, value)
    found: dict[str, dict[str, JsonValue]] = {}
    for tool in tools:
        required = tool.input_schema.get("required")
        names = [str(name) for name in required] if isinstance(required, list) else []
        if all(name in first for name in names):
            found[tool.name] = {name: first[name] for name in names}
    return found
