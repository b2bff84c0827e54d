"""Shared primitives: JSON values and the canonical hashing every content hash uses."""

from __future__ import annotations

import hashlib
import json
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, JsonValue, SerializerFunctionWrapHandler, model_serializer

__all__ = ["JsonValue", "LeavesOutEmpty", "Model", "canonical_json", "content_hash"]


class Model(BaseModel):
    """Base for every contract: unknown fields are errors, instances are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class LeavesOutEmpty(Model):
    """A contract whose fields named in `left_out_when_empty`, added after records of it were published, are left
    out of its dump while empty: a record without them serializes (and hashes) exactly as before they existed."""

    left_out_when_empty: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _leave_out_empty(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        for name in self.left_out_when_empty:
            if not data.get(name):
                data.pop(name, None)
        return data


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace, so equal content always hashes equally."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()
