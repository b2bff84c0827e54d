"""What each commit of an imported environment changes and which commit undoes it, found by calling them:
the `effect` its tool card declares ("orders.status=cancelled") and its `undone_by`, which the scenarios' checks
and the environment checks use and which an imported environment does not state. Run in the sandbox, never on
the host."""

from __future__ import annotations

from typing import NamedTuple

from abstaingen.model import EnvironmentBundle, JsonValue, TaskOverlay, ToolKind, ToolSpec
from abstaingen.model.task import record_changes
from abstaingen.sandboxes.backends import SandboxBackend
from abstaingen.sandboxes.session import SandboxSession, calling, run_episodes
from abstaingen.store import bundle_in_scratch
from abstaingen.validators.environment_checks import args_for, then_call

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


class Derived(NamedTuple):
    effects: dict[str, str]  # commit -> the effect its example call had
    undone_by: dict[str, str]  # commit -> the commit that, called after it, brought the state back


def _undoes_with(commit: ToolSpec, undo: ToolSpec) -> bool:
    """Whether the commit's example holds every argument the undo requires (as the reversibility check calls it)."""
    required = undo.input_schema.get("required")
    given = args_for(undo, commit.examples[0])
    return isinstance(required, list) and bool(required) and set(map(str, required)) <= set(given)


async def derive(bundle: EnvironmentBundle, backend: SandboxBackend) -> Derived:
    """For each commit that declares none and has an example: its effect, from calling the example; and its
    undo, the first other commit that, called right after it with the arguments of the example it takes,
    brings the state back exactly (as the environment checks' reversibility check calls it)."""
    commits = [t for t in bundle.tools if t.kind == ToolKind.COMMIT and t.examples]
    undone = {t.undone_by for t in bundle.tools if t.undone_by}
    tried = [(commit, undo) for commit in commits if commit.undone_by is None and commit.name not in undone
             for undo in commits if undo is not commit and _undoes_with(commit, undo)]
    alone = [t for t in commits if t.effect is None]
    with bundle_in_scratch(bundle) as folder:
        async with SandboxSession(folder, backend) as session:
            done = await run_episodes(session, bundle.env_id, [(TaskOverlay(), calling(session, t.name, t.examples[0]))
                                                               for t in alone])
            undone_runs = await run_episodes(session, bundle.env_id, [
                (TaskOverlay(), then_call(session, commit, undo, commit.examples[0])) for commit, undo in tried])
    effects = {}
    for tool, (trace, outcome) in zip(alone, done, strict=True):
        if outcome.ok and (effect := effect_of(bundle.initial_state, trace.final_state, tool.examples[0])):
            effects[tool.name] = effect
    undone_by: dict[str, str] = {}
    for (commit, undo), (trace, (done_first, done_second)) in zip(tried, undone_runs, strict=True):
        if done_first.ok and done_second.ok and commit.name not in undone_by and undo.name not in undone_by and trace.final_state == bundle.initial_state:
            undone_by[commit.name] = undo.name
    return Derived(effects, undone_by)


def with_derived(bundle: EnvironmentBundle, derived: Derived) -> EnvironmentBundle:
    return bundle.model_copy(update={"tools": [t.model_copy(update={
        **({"effect": derived.effects[t.name]} if t.name in derived.effects else {}),
        **({"undone_by": derived.undone_by[t.name]} if t.name in derived.undone_by else {})}) for t in bundle.tools]})
