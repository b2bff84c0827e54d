"""The reference execution DAG: tool calls whose arguments may bind earlier outputs."""

from __future__ import annotations

import json
from functools import cached_property

import networkx as nx
from pydantic import Field, model_validator

from abstaingen.model.common import JsonValue, Model


def shape(value: JsonValue) -> str:
    """What a result holds, in a few words: where a path into it must start."""
    if isinstance(value, list):
        return f"a list of {len(value)} (a path into it starts with a position, \"0\" for the first)"
    if isinstance(value, dict):
        return f"an object with keys {', '.join(map(str, list(value)[:15]))}"
    return f"the value {json.dumps(value)[:60]}"


class OutputRef(Model):
    """An argument taken from an earlier node's output: `node`'s result at `path`."""

    node: str = Field(description="the earlier node whose result is read")
    path: list[str | int] = Field(default_factory=list, description="keys and list indexes into that result")

    def resolve(self, outputs: dict[str, JsonValue]) -> JsonValue:
        """The value at `path`; a path that does not fit says what is there instead."""
        value = outputs[self.node]
        for key in self.path:
            if isinstance(key, int):
                if not isinstance(value, list) or not -len(value) <= key < len(value):
                    raise LookupError(f"{self.node}{self._where(key)}: no item {key} in {shape(value)}")
                value = value[key]
            else:
                if not isinstance(value, dict) or key not in value:
                    raise LookupError(f"{self.node}{self._where(key)}: no key {key!r} in {shape(value)}")
                value = value[key]
        return value

    def _where(self, upto: str | int) -> str:
        return "".join(f"[{k!r}]" for k in self.path[: self.path.index(upto)])


class DagNode(Model):
    id: str = Field(description="the node's id, unique in its DAG")
    tool: str = Field(description="the tool called")
    args: dict[str, JsonValue] = Field(default_factory=dict, description="literal arguments")
    bindings: dict[str, OutputRef] = Field(default_factory=dict, description="arguments taken from earlier results")
    after: list[str] = Field(default_factory=list, description="control dependencies beyond data")
    expect_error: bool = Field(
        default=False, description="the call is expected to fail (a fault the next call retries past, or the blocker)"
    )

    @model_validator(mode="after")
    def _no_argument_twice(self) -> DagNode:
        both = set(self.args) & set(self.bindings)
        if both:
            raise ValueError(f"node {self.id}: arguments both literal and bound: {sorted(both)}")
        return self

    def dependencies(self) -> set[str]:
        return {ref.node for ref in self.bindings.values()} | set(self.after)

    def resolve_args(self, outputs: dict[str, JsonValue]) -> dict[str, JsonValue]:
        return {**self.args, **{name: ref.resolve(outputs) for name, ref in self.bindings.items()}}


class ExecutionDag(Model):
    nodes: list[DagNode] = Field(default_factory=list, description="the calls; each runs after the nodes it "
                                                                   "depends on")

    @model_validator(mode="after")
    def _unique_ids(self) -> ExecutionDag:
        ids = [n.id for n in self.nodes]
        if len(ids) != len(set(ids)):
            raise ValueError(f"duplicate node ids in DAG: {ids}")
        return self

    @cached_property
    def graph(self) -> nx.DiGraph:
        graph = nx.DiGraph()
        for node in self.nodes:
            graph.add_node(node.id)
        for node in self.nodes:
            for dep in node.dependencies():
                graph.add_edge(dep, node.id)
        return graph

    def node(self, node_id: str) -> DagNode:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    def order(self) -> list[DagNode]:
        """Nodes in a deterministic topological order (ties broken by listing order)."""
        position = {n.id: i for i, n in enumerate(self.nodes)}
        ids = nx.lexicographical_topological_sort(self.graph, key=position.__getitem__)
        return [self.node(i) for i in ids]
