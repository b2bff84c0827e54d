"""What each commit of an imported environment changes, found by calling it: the `effect` its tool card
declares ("orders.status=cancelled"), which the scenarios' checks compare between tools and which an
imported environment does not state. Run in the sandbox, never on the host."""

from __future__ import annotations

from abstaingen.model import EnvironmentBundle, JsonValue, TaskOverlay, ToolKind
from abstaingen.model.task import record_changes
from abstaingen.sandboxes.backends import SandboxBackend
from abstaingen.sandboxes.session import SandboxSession, calling, run_episodes
from abstaingen.store import bundle_in_scratch

PREFERRED = ("status", "state")  # of several fields a call changes, the one that says what happened to the record


def effect_of(before: dict[str, JsonValue], after: dict[str, JsonValue], args: dict[str, JsonValue]) -> str | None:
    """The effect one call had: the field it changed ("collection.field"), with the value it wrote when the
    value is a string the call was not given ("orders.status=cancelled", not "users.name=Ada"); None when it
    changed records of several collections, added or removed records, or nothing."""
    changes = record_changes(before, after)
    if not changes or any(c.field is None for c in changes) or len({c.collection for c in changes}) != 1:
        return None
    fields = sorted({c.field for c in changes if c.field is not None})
    field = next((f for f in PREFERRED if f in fields), fields[0])
    value = next(c.new for c in changes if c.field == field)  # as the first record it changed wrote it
    given = set(map(str, args.values()))
    if isinstance(value, str) and 0 < len(value) <= 40 and value not in given and "=" not in value:
        return f"{changes[0].collection}.{field}={value}"
    return f"{changes[0].collection}.{field}"


async def derive_effects(bundle: EnvironmentBundle, backend: SandboxBackend) -> dict[str, str]:
    """tool -> the effect its example call had, for each commit that declares none and has an example."""
    tools = [t for t in bundle.tools if t.kind == ToolKind.COMMIT and t.effect is None and t.examples]
    with bundle_in_scratch(bundle) as folder:
        async with SandboxSession(folder, backend) as session:
            done = await run_episodes(session, bundle.env_id, [(TaskOverlay(), calling(session, t.name, t.examples[0]))
                                                               for t in tools])
    effects = {}
    for tool, (trace, outcome) in zip(tools, done, strict=True):
        if outcome.ok and (effect := effect_of(bundle.initial_state, trace.final_state, tool.examples[0])):
            effects[tool.name] = effect
    return effects


def with_effects(bundle: EnvironmentBundle, effects: dict[str, str]) -> EnvironmentBundle:
    return bundle.model_copy(update={"tools": [t.model_copy(update={"effect": effects[t.name]}) if t.name in effects
                                               else t for t in bundle.tools]})
