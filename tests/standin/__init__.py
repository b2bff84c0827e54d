"""A stand-in OpenAI + Anthropic model server for tests (a test fixture, never run by users); see server.py."""

from .server import (
    Answer,
    Computed,
    Delay,
    Raw,
    Recorded,
    Refusal,
    Reply,
    StandIn,
    Status,
    Truncated,
    count_tokens,
)

__all__ = [
    "Answer",
    "Computed",
    "Delay",
    "Raw",
    "Recorded",
    "Refusal",
    "Reply",
    "StandIn",
    "Status",
    "Truncated",
    "count_tokens",
]
