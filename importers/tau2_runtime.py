"""Runs a tau2-bench domain's own tools over abstaingen's JSON state, inside the sandbox.

`abstaingen env import tau2` writes a bundle whose implementation is this file's text, then the domain's
files (as strings), then one handler per tool. It is never imported or run on the host: it needs only the
standard library and pydantic (which the sandbox has, for `mcp`). The modules the domain imports from
tau2 itself are stood in for by the few names domains use (`DB`, `ToolKitBase`, `ToolType`, `is_tool`,
`BaseModelNoExtra`, `DATA_DIR`); the domain's `data_model.py`, `tools.py` and `utils.py` run as written.

abstaingen's state is collections of records with an "id"; a tau2 database keys its records by id in a dict.
`KEYED` names those collections (and whether their records carry an "id" of their own), so each call turns
the state into the domain's database, calls the tool as tau2's environment does (raw arguments; any
exception fails the call), and turns the database back, leaving out the fields nobody set, so a lookup
leaves the state exactly as it was.
"""

from __future__ import annotations

import datetime
import enum
import sys
import types
import typing
from pathlib import PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict


def _module(name: str, **names: Any) -> types.ModuleType:
    module = sys.modules.get(name) or types.ModuleType(name)
    module.__dict__.update(names)
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(_module(parent), child, module)
    return module


class _NoExtra(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _ToolType(enum.StrEnum):
    READ = "read"
    WRITE = "write"
    THINK = "think"
    GENERIC = "generic"


def _is_tool(tool_type: _ToolType = _ToolType.READ, mutates_state: bool | None = None) -> Any:
    def mark(function: Any) -> Any:
        function.tool_type = tool_type
        return function
    return mark


class _ToolKitBase:
    def __init__(self, db: Any = None) -> None:
        self.db = db


class _Logger:
    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def _clock_for_pydantic() -> None:
    """The sandbox freezes the clock by putting subclasses in `datetime.date` and `datetime.datetime`; tell
    pydantic to treat them as the dates and times they are (telecom's models have date fields)."""
    for kind in (datetime.datetime, datetime.date):
        if kind.__module__ != "datetime" and "__get_pydantic_core_schema__" not in vars(kind):
            kind.__get_pydantic_core_schema__ = classmethod(  # type: ignore[attr-defined]
                lambda cls, source, handler: handler.generate_schema(cls.__mro__[1]))  # the class it stands in for


def install(sources: dict[str, str]) -> None:
    """Stand in for tau2's own modules, then run the domain's files (module name -> source) in order."""
    _clock_for_pydantic()
    _module("tau2.utils.pydantic_utils", BaseModelNoExtra=_NoExtra)
    _module("tau2.utils.utils", DATA_DIR=PurePosixPath("/nonexistent/tau2-data"))
    _module("tau2.utils")
    _module("tau2.environment.db", DB=_NoExtra)
    _module("tau2.environment.toolkit", ToolKitBase=_ToolKitBase, ToolType=_ToolType, is_tool=_is_tool,
            is_discoverable_tool=_is_tool)
    _module("loguru", logger=_Logger())  # domains log through loguru, which the sandbox does not have
    for name, source in sources.items():
        module = _module(name)
        exec(compile(source, name.replace(".", "/") + ".py", "exec"), module.__dict__)  # the sandbox's own process


def _allowed(database: type[BaseModel], name: str) -> set[str] | None:
    """The fields a keyed collection's records may hold, when their model forbids any other; None: any."""
    field = database.model_fields.get(name)
    model = typing.get_args(field.annotation)[-1] if field is not None and typing.get_args(field.annotation) else None
    if isinstance(model, type) and issubclass(model, BaseModel) and model.model_config.get("extra") == "forbid":
        return set(model.model_fields)
    return None


def to_database(state: dict[str, Any], keyed: dict[str, bool], database: type[BaseModel]) -> dict[str, Any]:
    """abstaingen's state as the domain's database: a keyed collection's list back into a dict by id, without
    the fields its model does not know when it forbids them (a notes field abstaingen's rules added), and
    without the collections the database has none of."""
    data = {}
    for name, value in state.items():
        if name not in database.model_fields:  # a collection abstaingen's overlay added: the domain never reads it
            continue
        if name not in keyed:
            data[name] = value
            continue
        allowed = _allowed(database, name)
        data[name] = {record["id"]: {k: v for k, v in record.items() if (k != "id" or keyed[name])
                                     and (allowed is None or k in allowed)} for record in value}
    return data


def to_state(database: dict[str, Any], keyed: dict[str, bool], before: dict[str, Any]) -> dict[str, Any]:
    """The database as abstaingen's state, each record keeping the fields the domain's model did not read."""
    state = {}
    for name, records in database.items():
        if name not in keyed:
            state[name] = records
            continue
        old = {record["id"]: record for record in before.get(name, [])}
        state[name] = [{**{k: v for k, v in old.get(key, {}).items() if k not in value},
                        **(value if keyed[name] else {"id": key, **value})} for key, value in records.items()]
    return state


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return value.value
    return value


def call(state: dict[str, Any], module: str, toolkit: str, database: str, keyed: dict[str, bool], tool: str,
         args: dict[str, Any]) -> Any:
    """Call `tool` of the domain's toolkit class on the state; write the database back when it changed."""
    names = sys.modules[module].__dict__
    db = names[database].model_validate(to_database(state, keyed, names[database]))
    before = db.model_dump(mode="json", exclude_unset=True)
    try:
        result = getattr(names[toolkit](db), tool)(**args)
    except Exception as exc:  # tau2's environment answers every exception as an error message
        raise ValueError(f"{type(exc).__name__}: {exc}") from None
    after = db.model_dump(mode="json", exclude_unset=True)
    if after != before:  # the database's collections written back; an overlay's own collections kept as they are
        state.update(to_state(after, keyed, state))
    return _jsonable(result)
