"""Shared primitives: JSON values and the canonical hashing every content hash uses."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, JsonValue

__all__ = ["JsonValue", "Model", "canonical_json", "content_hash"]


class Model(BaseModel):
    """Base for every contract: unknown fields are errors, instances are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace, so equal content always hashes equally."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()
