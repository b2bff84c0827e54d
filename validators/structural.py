"""Layer 1: structural checks. Cheap, no execution; each returns one CheckResult."""

from __future__ import annotations

import functools
import json

import jsonschema
import networkx as nx

from abstaingen.model import (
    SCENARIOS,
    CheckResult,
    Deliverable,
    Dimension,
    EnvironmentBundle,
    Phase,
    TaskPair,
    TaskVariant,
    ToolKind,
)
from abstaingen.model.common import canonical_json
from abstaingen.model.perturbation import WITNESS_FOR_SCENARIO


def _result(name: str, problems: list[str]) -> CheckResult:
    return CheckResult(name=name, passed=not problems, detail="; ".join(problems) if problems else "ok")


def check_dag_acyclic(pair: TaskPair) -> CheckResult:
    problems = []
    for variant in (pair.act, pair.abstain):
        dag = variant.reference_dag
        dangling = {dep for n in dag.nodes for dep in n.dependencies()} - {n.id for n in dag.nodes}
        if dangling:
            problems.append(f"{variant.task_type}: depends on unknown nodes {sorted(dangling)}")
        elif not nx.is_directed_acyclic_graph(dag.graph):
            problems.append(f"{variant.task_type}: reference DAG has a cycle {nx.find_cycle(dag.graph)}")
    return _result("dag_acyclic", problems)


def check_tool_arguments(pair: TaskPair, bundle: EnvironmentBundle) -> CheckResult:
    """Every DAG node names a tool of the environment and its literal arguments fit the input schema."""
    problems = []
    for variant in (pair.act, pair.abstain):
        for node in variant.reference_dag.nodes:
            if not bundle.has_tool(node.tool):
                problems.append(f"{variant.task_type}/{node.id}: unknown tool {node.tool}")
                continue
            schema = bundle.tool(node.tool).input_schema
            # Bound arguments are only known at run time: check them as present, literal ones fully.
            placeholder = {name: _placeholder(schema, name) for name in node.bindings}
            error = jsonschema.exceptions.best_match(_validator(bundle, node.tool).iter_errors({**node.args, **placeholder}))
            if error is not None:
                problems.append(f"{variant.task_type}/{node.id}: {node.tool} arguments: {error.message}")
            unknown = set(node.bindings) - set(schema.get("properties", {}))  # type: ignore[arg-type]
            if unknown:
                problems.append(f"{variant.task_type}/{node.id}: binds unknown arguments {sorted(unknown)}")
    return _result("tool_arguments", problems)


@functools.lru_cache(maxsize=4096)
def _compiled(schema_json: str) -> jsonschema.protocols.Validator:
    return jsonschema.Draft202012Validator(json.loads(schema_json))


def _validator(bundle: EnvironmentBundle, tool: str) -> jsonschema.protocols.Validator:
    return _compiled(canonical_json(bundle.tool(tool).input_schema))


def _placeholder(schema: dict, name: str):
    kind = schema.get("properties", {}).get(name, {}).get("type")
    return {"string": "x", "number": 1, "integer": 1, "boolean": True, "array": [], "object": {}}.get(kind, "x")


def check_critical_actions(pair: TaskPair, bundle: EnvironmentBundle) -> CheckResult:
    problems = []
    for variant in (pair.act, pair.abstain):
        for name in variant.critical_actions:
            if not bundle.has_tool(name):
                problems.append(f"{variant.task_type}: critical action {name} is not a tool")
            elif bundle.tool(name).kind != ToolKind.COMMIT:
                problems.append(f"{variant.task_type}: critical action {name} is a {bundle.tool(name).kind} tool")
    act_tools = {n.tool for n in pair.act.reference_dag.nodes}
    missing = set(pair.act.critical_actions) - act_tools
    if missing:
        problems.append(f"act: critical actions not in the reference DAG: {sorted(missing)}")
    return _result("critical_actions", problems)


def check_deliverable(pair: TaskPair, bundle: EnvironmentBundle) -> CheckResult:
    """op tasks change state through critical commits; info tasks answer and commit nothing."""
    problems = []
    if pair.act.deliverable != pair.abstain.deliverable:
        problems.append("act and abstain sides have different deliverables")
    for variant in (pair.act, pair.abstain):
        commits = [n.tool for n in variant.reference_dag.nodes
                   if bundle.has_tool(n.tool) and bundle.tool(n.tool).kind == ToolKind.COMMIT]
        if variant.deliverable == Deliverable.INFO:
            if commits:
                problems.append(f"{variant.task_type}: info task calls commit tools {commits}")
            if variant.critical_actions:
                problems.append(f"{variant.task_type}: info task has critical actions")
    act = pair.act
    if act.deliverable == Deliverable.OP and not (act.critical_actions and act.final_state):
        problems.append("act: op task needs critical actions and final-state assertions")
    if act.deliverable == Deliverable.INFO and not act.expected_answer:
        problems.append("act: info task needs an expected answer")
    if not pair.abstain.critical_actions and pair.abstain.deliverable == Deliverable.OP:
        problems.append("abstain: op task must name the critical actions it must not take")
    return _result("deliverable_consistent", problems)


def changed_dimensions(act: TaskVariant, abstain: TaskVariant) -> set[Dimension]:
    changed = set()
    if act.instruction != abstain.instruction:
        changed.add(Dimension.INSTRUCTION)
    if act.overlay.state_patch != abstain.overlay.state_patch:
        changed.add(Dimension.ENV_STATE)
    if act.overlay.hidden_tools != abstain.overlay.hidden_tools:
        changed.add(Dimension.TOOL_AVAILABILITY)
    if act.overlay.broken_tools != abstain.overlay.broken_tools:
        changed.add(Dimension.TOOL_BEHAVIOR)
    return changed


SAID = {  # a dimension in the words of the drafts that change it
    Dimension.INSTRUCTION: "the request (instruction)",
    Dimension.ENV_STATE: "the records (a note, a second system's copy)",
    Dimension.TOOL_AVAILABILITY: "the tools offered (hidden_tools)",
    Dimension.TOOL_BEHAVIOR: "how a tool behaves (failing_tool)",
}


def check_single_perturbation(pair: TaskPair) -> CheckResult:
    """T+ and T- differ in exactly the one dimension the scenario perturbs, and share everything else."""
    problems = []
    expected = SCENARIOS[pair.perturbation.scenario]
    if pair.scenario != expected.scenario.value:
        problems.append(f"pair says {pair.scenario} but perturbation says {expected.scenario.value}")
    if (pair.perturbation.phase, pair.perturbation.dimension) != (expected.phase, expected.dimension):
        problems.append(f"{expected.scenario.value} is {expected.phase}/{expected.dimension}, "
                        f"got {pair.perturbation.phase}/{pair.perturbation.dimension}")
    if pair.perturbation.witness.kind != WITNESS_FOR_SCENARIO[expected.scenario]:
        problems.append(f"{expected.scenario.value} needs a {WITNESS_FOR_SCENARIO[expected.scenario]} witness")
    changed = changed_dimensions(pair.act, pair.abstain)
    if changed != {expected.dimension}:
        problems.append(f"T+ and T- differ in {' and '.join(SAID[d] for d in sorted(changed)) or 'nothing'}; "
                        f"{expected.scenario.value} changes {SAID[expected.dimension]} and nothing else")
    for attr in ("env_id", "system_prompt", "premise"):
        if getattr(pair.act, attr) != getattr(pair.abstain, attr):
            problems.append(f"T+ and T- differ in {attr}")
    return _result("single_perturbation", problems)


def check_abstain_labels(pair: TaskPair) -> CheckResult:
    """The abstain reference holds the calls a careful agent makes before it can know (none when the
    instruction alone shows the problem, the lookup when only its result shows that two records fit, up
    to the revealing call in a runtime scenario), and w is their number."""
    problems = []
    abstain = pair.abstain
    calls = len(abstain.reference_dag.nodes)
    phase = SCENARIOS[pair.perturbation.scenario].phase
    if abstain.earliest_abstain_step != calls:
        problems.append(f"earliest_abstain_step {abstain.earliest_abstain_step} but the reference makes {calls} "
                        "calls before the reason to stop shows")
    if phase == Phase.RUNTIME and not calls:
        problems.append("runtime scenario whose reference makes no call: the evidence arrives only through one")
    if pair.perturbation.scenario.value in ("S1", "S2") and not abstain.clarification:
        problems.append("S1/S2 abstain task needs the clarification a user would give")
    return _result("abstain_labels", problems)


CHECKS = ("dag_acyclic", "tool_arguments", "critical_actions", "deliverable_consistent", "single_perturbation",
          "abstain_labels")


def structural_checks(pair: TaskPair, bundle: EnvironmentBundle) -> list[CheckResult]:
    return [
        check_dag_acyclic(pair),
        check_tool_arguments(pair, bundle),
        check_critical_actions(pair, bundle),
        check_deliverable(pair, bundle),
        check_single_perturbation(pair),
        check_abstain_labels(pair),
    ]
