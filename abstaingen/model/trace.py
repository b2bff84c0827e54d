"""What happened in a sandbox: the execution log a grader reads and the agent never sees."""

from __future__ import annotations

from pydantic import Field

from abstaingen.model.common import JsonValue, Model, content_hash


class ToolCallRecord(Model):
    step: int
    tool: str
    args: dict[str, JsonValue]
    ok: bool
    result: JsonValue = None
    error: str | None = None
    state_hash_after: str


class Trace(Model):
    env_id: str
    calls: list[ToolCallRecord] = Field(default_factory=list)
    initial_state_hash: str
    final_state_hash: str
    final_state: dict[str, JsonValue]

    @property
    def trace_hash(self) -> str:
        return content_hash(
            {"calls": [c.model_dump(mode="json") for c in self.calls], "final": self.final_state_hash}
        )
