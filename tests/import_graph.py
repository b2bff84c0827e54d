"""The import graph of abstaingen's own modules, read from the source (nothing is imported), and the layers its
folders stand for. tests/test_layers.py holds the graph to the layers; `python tests/import_graph.py [REPO]`
prints the counts (upward imports, cycles), e.g. for an older checkout.

Every folder is one layer; a module may import its own layer and the ones below, never one above, and no
set of modules may import each other round in a cycle. Imports inside functions count like any other: they
run too, only later.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import networkx as nx

# Bottom to top: the repository folder and the package it is installed as (pyproject's package-dir).
LAYERS: tuple[tuple[str, str, str], ...] = (
    ("abstaingen", "abstaingen", "ground floor: contracts, config, providers and the structured-output loop, "
                                 "store, scoring, reply judges"),
    ("prompts", "abstaingen.prompts", "ground floor: the templates the structured-output loop renders"),
    ("sandboxes", "abstaingen.sandboxes", "where environment code runs"),
    ("validators", "abstaingen.validators", "checks of environments, pairs, OOD items and releases' records"),
    ("generators", "abstaingen.generators", "the generation backends of both products"),
    ("pipelines", "abstaingen.pipelines", "the Prefect-free composition of each product, and release verify"),
    ("evaluation", "abstaingen.evaluation", "models evaluated on a release through Inspect AI, and the reports"),
    ("exporters", "abstaingen.exporters", "a published release in another tool's layout"),
    ("importers", "abstaingen.importers", "someone else's environment read into a bundle"),
    ("flows", "abstaingen.flows", "entry points: the command line, the Prefect flows, schedule, UI, console"),
)
LEVEL = {"abstaingen": 0, "prompts": 0, "sandboxes": 1, "validators": 2, "generators": 3, "pipelines": 4,
         "evaluation": 5, "exporters": 6, "importers": 6, "flows": 7}
# `python -m abstaingen` runs this file as a script; no module imports it.
ENTRY_SCRIPTS = ("abstaingen.__main__",)


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    in_function: bool
    line: int


@dataclass
class Graph:
    modules: dict[str, str]  # module -> the repository folder it is in
    imports: list[Import]
    third_party: dict[str, set[str]]  # module -> the top-level names of other packages it imports (stdlib too)

    def layer(self, module: str) -> int:
        return LEVEL[self.modules[module]]

    def upward(self) -> list[Import]:
        return [i for i in self.imports if i.importer not in ENTRY_SCRIPTS
                and self.layer(i.imported) > self.layer(i.importer)]

    def cycles(self) -> list[list[str]]:
        """The strongly connected sets of modules larger than one (each holds at least one cycle)."""
        graph = nx.DiGraph((i.importer, i.imported) for i in self.imports if i.importer != i.imported)
        return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)


def sources_of(repo: Path) -> dict[str, tuple[str, Path]]:
    """Every module of the layered folders: its folder and its file."""
    sources: dict[str, tuple[str, Path]] = {}
    for folder, package, _ in LAYERS:
        for path in sorted((repo / folder).rglob("*.py")):  # a folder an older checkout lacks has none
            parts = list(path.relative_to(repo / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            sources[".".join([package, *parts])] = (folder, path)
    return sources


def _known(name: str, modules: dict[str, str]) -> str | None:
    """The module an import names, or the package holding the name (`from pkg import function`)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def read_graph(repo: Path) -> Graph:
    sources = sources_of(repo)
    modules = {module: folder for module, (folder, _) in sources.items()}
    imports: list[Import] = []
    third_party: dict[str, set[str]] = {module: set() for module in modules}
    for module, (_, path) in sources.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]

        def visit(node: ast.AST, in_function: bool, module: str = module, package: str = package) -> None:
            for child in ast.iter_child_nodes(node):
                inside = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
                if isinstance(child, ast.Import):
                    named = [alias.name for alias in child.names]
                    third_party[module].update(n.partition(".")[0] for n in named if not n.startswith("abstaingen"))
                elif isinstance(child, ast.ImportFrom):
                    base = child.module or ""
                    if child.level:
                        anchor = package.split(".")[:len(package.split(".")) - (child.level - 1)]
                        base = ".".join([*anchor, base] if base else anchor)
                    named = [f"{base}.{alias.name}" for alias in child.names]
                    if not child.level and not base.startswith("abstaingen"):
                        third_party[module].add(base.partition(".")[0])
                else:
                    named = []
                for name in named:
                    if (target := _known(name, modules)) is not None:
                        imports.append(Import(module, target, inside, child.lineno))
                visit(child, inside)

        visit(tree, False)
    return Graph(modules, imports, third_party)


def main(argv: list[str]) -> int:
    repo = Path(argv[0]) if argv else Path(__file__).resolve().parents[1]
    graph = read_graph(repo)
    upward = graph.upward()
    print(f"{len(graph.modules)} modules, {len(graph.imports)} imports of our own modules")
    print(f"upward: {sum(not i.in_function for i in upward)} at module level, "
          f"{sum(i.in_function for i in upward)} inside functions")
    for item in upward:
        print(f"  {item.importer}:{item.line} -> {item.imported}{' (in a function)' if item.in_function else ''}")
    cycles = graph.cycles()
    print(f"cycles: {len(cycles)} strongly connected sets, {sum(map(len, cycles))} modules in them")
    for members in cycles:
        print(f"  {len(members)}: {', '.join(members)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
