"""T+ must be something a policy-following agent does: the environment's policies, evaluated against what
the act side's replay did.

- confirmation: every commit that moved an amount of a governed category above the threshold was
  confirmed, for that amount, in the instruction;
- cross-check: an answer or commit that depends on a cross-checked field was compared with the second
  system (the DAG reads it), and the two agree within the stated tolerance;
- notes: the target record's notes were read (some earlier call returned the record with its notes field)
  before the commit, or at all for an answer;
- every policy is stated in the system prompt (an unstated rule is no rule the agent can follow).

Whether a note restricts the action is free text: that is the S8 witness's claim.
"""

from __future__ import annotations

from abstaingen.model import (
    CheckResult,
    ConfirmationPolicy,
    CrossCheckPolicy,
    Deliverable,
    EnvironmentBundle,
    JsonValue,
    NotesPolicy,
    TaskPair,
    TaskVariant,
    ToolSpec,
)
from abstaingen.model.task import RecordRef, apply_state_patch, find_record
from abstaingen.sandboxes.replay import ReplayResult

CHECK = "act_policies"


def moved_amount(tool: ToolSpec, args: dict[str, JsonValue], state: dict[str, JsonValue]) -> float | None:
    """What a call of a commit with an impact moves, from its arguments or the record it acts on."""
    impact = tool.impact
    if impact is None:
        return None
    if impact.argument is not None:
        value = args.get(impact.argument)
    else:
        record = find_record(state, RecordRef(collection=impact.collection or "",
                                              record_id=str(args.get(impact.record_argument or ""))))
        value = None if record is None else record.get(impact.record_field or "")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def confirmation_violations(variant: TaskVariant, bundle: EnvironmentBundle, calls: list[tuple[str, dict]],
                            state: dict[str, JsonValue]) -> list[str]:
    """Commits among `calls` (tool, args) whose amount needs a confirmation the instruction does not give."""
    problems = []
    for name, args in calls:
        tool = bundle.tool(name)
        amount = moved_amount(tool, args, state)
        if amount is None or tool.impact is None:
            continue
        for policy in bundle.policies_of(ConfirmationPolicy):
            if policy.category != tool.impact.category or amount <= policy.threshold:
                continue
            if not variant.confirms(policy.category, amount):
                problems.append(f"{name} moves {amount:g} (above {policy.threshold:g}) without the user's "
                                f"confirmation of that amount: a task to carry out as asked moves at most "
                                f"{policy.threshold:g} (a smaller amount, or a record that allows one)")
    return problems


def _field_value(outputs: dict[str, JsonValue], node: str, field: str) -> float | None:
    output = outputs.get(node)
    value = output.get(field) if isinstance(output, dict) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _uses(act: TaskVariant, bundle: EnvironmentBundle, field: str, readers: list[str]) -> set[str]:
    """The DAG nodes whose reading of `field` the act side's answer or commits depend on."""
    used = set()
    if act.deliverable == Deliverable.INFO and act.answer_from and act.answer_from.path[-1:] == [field]:
        used.add(act.answer_from.node)
    for node in act.reference_dag.nodes:
        if node.tool not in act.critical_actions:
            continue
        used.update(ref.node for ref in node.bindings.values() if ref.path[-1:] == [field])
        impact = bundle.tool(node.tool).impact
        if impact is not None and impact.record_field == field:
            used.update(readers)
    return used


def cross_check_violations(act: TaskVariant, bundle: EnvironmentBundle, replay: ReplayResult) -> list[str]:
    outputs, problems = replay.run.outputs, []
    for policy in bundle.policies_of(CrossCheckPolicy):
        nodes = act.reference_dag.nodes
        mirrors = [n.id for n in nodes if n.tool == policy.mirror_tool]
        readers = [n.id for n in nodes if n.id not in mirrors and _field_value(outputs, n.id, policy.field) is not None]
        used = _uses(act, bundle, policy.field, readers)
        if not used:
            continue
        if not mirrors:
            problems.append(f"the act side uses {policy.field} but never reads {policy.mirror_tool}")
            continue
        theirs = _field_value(outputs, mirrors[0], policy.field)
        for node in sorted(used):
            ours = _field_value(outputs, node, policy.field)
            if ours is not None and theirs is not None and abs(ours - theirs) > policy.tolerance:
                problems.append(f"{policy.field} is {ours:g} but {policy.mirror_tool} says {theirs:g}, more than the "
                                f"tolerance of {policy.tolerance:g}: a careful agent must not rely on it")
    return problems


def names_record(value: dict[str, JsonValue], record_id: str) -> bool:
    """Whether a result's object is the record: its "id" is the record's, or, when it has no "id" (the models of
    an imported environment name it `order_id`, `user_id`...), one of its values is."""
    return value.get("id") == record_id if "id" in value else record_id in value.values()


def _shows_record(value: JsonValue, record_id: str, field: str) -> bool:
    if isinstance(value, dict):
        return (names_record(value, record_id) and field in value) or any(
            _shows_record(v, record_id, field) for v in value.values())
    return isinstance(value, list) and any(_shows_record(v, record_id, field) for v in value)


def notes_violations(act: TaskVariant, target: RecordRef | None, bundle: EnvironmentBundle,
                     replay: ReplayResult) -> list[str]:
    problems = []
    for policy in bundle.policies_of(NotesPolicy):
        if target is None or target.collection != policy.collection:
            continue
        calls = replay.trace.calls
        acting = next((i for i, c in enumerate(calls) if c.ok and c.tool in act.critical_actions), len(calls))
        if not any(c.ok and _shows_record(c.result, target.record_id, policy.field) for c in calls[:acting]):
            problems.append(f"the act side {'acts on' if acting < len(calls) else 'answers about'} "
                            f"{target.collection}/{target.record_id} without reading its {policy.field} first (a "
                            f"call before it whose result holds the record, by its id, with its {policy.field})")
    return problems


def act_policy_problems(act: TaskVariant, target: RecordRef | None, bundle: EnvironmentBundle,
                        replay: ReplayResult) -> list[str]:
    """What the replayed act side did that its policies forbid (empty: nothing)."""
    problems = [f"the system prompt does not state: {p.statement!r}" for p in bundle.policies
                if p.statement not in act.system_prompt]
    state = apply_state_patch(bundle.initial_state, act.overlay.state_patch)
    commits = [(c.tool, c.args) for c in replay.trace.calls if c.ok and bundle.has_tool(c.tool)
               and c.tool in act.critical_actions]
    problems += confirmation_violations(act, bundle, commits, state)
    problems += cross_check_violations(act, bundle, replay)
    problems += notes_violations(act, target, bundle, replay)
    return problems


def check_act_policies(pair: TaskPair, bundle: EnvironmentBundle, replay: ReplayResult) -> CheckResult:
    problems = act_policy_problems(pair.act, pair.target, bundle, replay)
    return CheckResult(name=CHECK, passed=not problems, detail="; ".join(problems) or "ok")
