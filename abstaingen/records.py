"""Typed, flat-enough records of our contracts for columnar formats (parquet, Hugging Face datasets).

Every column has one type in every row, derived from the pydantic model:

- a nested model is a struct; a list is a list; str, enums and literals are strings; int, float and
  bool keep their types; an optional value is a nullable column of its type;
- a mapping with fixed value type (`dict[str, str]`, DAG bindings) is a list of `{key, value}`
  structs, in the mapping's order;
- a value that can be any JSON (JsonValue: tool arguments, state, patch values, `equals`), and a
  union of several shapes (a witness, a policy, a path of names and indexes), is a JSON string in a
  column whose name ends in `_json`.

`to_row` and `from_row` convert losslessly: `from_row(cls, to_row(x)) == x` for every instance.
`columns` lists every column with its type and the model's `Field(description=...)`, for cards.
"""

from __future__ import annotations

import enum
import json
import types
import typing
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, JsonValue

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["Column", "arrow_schema", "columns", "from_row", "to_row"]

JSON_SUFFIX = "_json"
_SCALARS = (str, int, float, bool)


class _Kind(enum.Enum):
    SCALAR = "scalar"
    JSON = "json"
    MODEL = "model"
    LIST = "list"
    MAPPING = "mapping"


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """(the annotation without Annotated and Optional, whether None is allowed)."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) == 1 and len(members) < len(typing.get_args(annotation)):
            inner, _ = _unwrap(members[0])
            return inner, True
    return annotation, False


def _kind(annotation: Any) -> _Kind:
    origin = typing.get_origin(annotation)
    if annotation is JsonValue or annotation is Any or origin in (typing.Union, types.UnionType):
        return _Kind.JSON
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _Kind.MODEL
    if origin in (list, tuple):
        return _Kind.JSON if _kind(_unwrap(typing.get_args(annotation)[0])[0]) is _Kind.JSON else _Kind.LIST
    if origin is dict:
        _, value = typing.get_args(annotation)
        return _Kind.JSON if _kind(_unwrap(value)[0]) is _Kind.JSON else _Kind.MAPPING
    if origin is Literal or (isinstance(annotation, type) and issubclass(annotation, enum.Enum)):
        return _Kind.SCALAR
    if annotation in _SCALARS:
        return _Kind.SCALAR
    raise TypeError(f"no column type for {annotation!r}")


def _column_name(name: str, annotation: Any) -> str:
    return name + JSON_SUFFIX if _kind(_unwrap(annotation)[0]) is _Kind.JSON else name


def _arrow_type(annotation: Any) -> pa.DataType:
    import pyarrow as pa  # the [hf] extra; only the parquet exports ask for arrow types

    annotation, _ = _unwrap(annotation)
    kind = _kind(annotation)
    if kind is _Kind.JSON:
        return pa.string()
    if kind is _Kind.MODEL:
        return pa.struct(list(arrow_schema(annotation)))
    if kind is _Kind.LIST:
        return pa.list_(_arrow_type(typing.get_args(annotation)[0]))
    if kind is _Kind.MAPPING:
        return pa.list_(pa.struct([pa.field("key", pa.string(), nullable=False),
                                   pa.field("value", _arrow_type(typing.get_args(annotation)[1]))]))
    if typing.get_origin(annotation) is Literal or issubclass(annotation, enum.Enum):
        return pa.string()
    return {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}[annotation]


def arrow_schema(model: type[BaseModel]) -> pa.Schema:
    import pyarrow as pa

    return pa.schema([pa.field(_column_name(name, field.annotation), _arrow_type(field.annotation),
                               nullable=_unwrap(field.annotation)[1])
                      for name, field in model.model_fields.items()])


def _encode(annotation: Any, value: Any) -> Any:
    annotation, _ = _unwrap(annotation)
    if value is None:
        return None
    kind = _kind(annotation)
    if kind is _Kind.JSON:
        return json.dumps(value, ensure_ascii=False, sort_keys=False)
    if kind is _Kind.MODEL:
        return _encode_model(annotation, value)
    if kind is _Kind.LIST:
        return [_encode(typing.get_args(annotation)[0], item) for item in value]
    if kind is _Kind.MAPPING:
        value_type = typing.get_args(annotation)[1]
        return [{"key": key, "value": _encode(value_type, item)} for key, item in value.items()]
    return value.value if isinstance(value, enum.Enum) else value


def to_row(instance: BaseModel) -> dict[str, Any]:
    """The instance as one row (JSON-mode values: enums as strings, JSON columns as text)."""
    return _encode_model(type(instance), instance.model_dump(mode="json"))


def _encode_model(model: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    # a field the model's serializer leaves out (an empty written_by) is written as its default
    return {_column_name(name, field.annotation): _encode(field.annotation, data[name] if name in data else
                                                          _default(field))
            for name, field in model.model_fields.items()}


def _default(field: Any) -> Any:
    value = field.get_default(call_default_factory=True)
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


def _decode(annotation: Any, value: Any) -> Any:
    annotation, _ = _unwrap(annotation)
    if value is None:
        return None
    kind = _kind(annotation)
    if kind is _Kind.JSON:
        return json.loads(value)
    if kind is _Kind.MODEL:
        return _fields_of(annotation, value)
    if kind is _Kind.LIST:
        return [_decode(typing.get_args(annotation)[0], item) for item in value]
    if kind is _Kind.MAPPING:
        value_type = typing.get_args(annotation)[1]
        return {item["key"]: _decode(value_type, item["value"]) for item in value}
    return value


def _fields_of(model: type[BaseModel], row: dict[str, Any]) -> dict[str, Any]:
    return {name: _decode(field.annotation, row[_column_name(name, field.annotation)])
            for name, field in model.model_fields.items() if _column_name(name, field.annotation) in row}


def from_row(model: type[BaseModel], row: dict[str, Any]) -> Any:
    """The instance a row holds (as read back from parquet or a Hugging Face dataset)."""
    return model.model_validate(_fields_of(model, row))


class Column(typing.NamedTuple):
    path: str
    type: str
    description: str


def columns(model: type[BaseModel], prefix: str = "") -> list[Column]:
    """Every column and nested field, with its type and description, depth first."""
    found = []
    for name, field in model.model_fields.items():
        annotation, optional = _unwrap(field.annotation)
        path = prefix + _column_name(name, field.annotation)
        kind = _kind(annotation)
        shown = _type_name(annotation, kind) + (" or null" if optional else "")
        found.append(Column(path, shown, " ".join((field.description or "").split())))
        inner = annotation
        if kind is _Kind.LIST:
            inner = _unwrap(typing.get_args(annotation)[0])[0]
        elif kind is _Kind.MAPPING:
            inner = _unwrap(typing.get_args(annotation)[1])[0]
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            found += columns(inner, path + ("[]." if kind is not _Kind.MODEL else "."))
    return found


def _type_name(annotation: Any, kind: _Kind) -> str:
    if kind is _Kind.JSON:
        return "string (JSON)"
    if kind is _Kind.MODEL:
        return f"struct ({annotation.__name__})"
    if kind is _Kind.LIST:
        inner, _ = _unwrap(typing.get_args(annotation)[0])
        return f"list of {_type_name(inner, _kind(inner))}"
    if kind is _Kind.MAPPING:
        inner, _ = _unwrap(typing.get_args(annotation)[1])
        return f"list of {{key, value: {_type_name(inner, _kind(inner))}}}"
    if typing.get_origin(annotation) is Literal:
        return "string: " + " | ".join(str(a) for a in typing.get_args(annotation))
    if issubclass(annotation, enum.Enum):
        return "string: " + " | ".join(str(m.value) for m in annotation)
    return {str: "string", int: "int64", float: "float64", bool: "bool"}[annotation]
