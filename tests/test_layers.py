"""The folders tell the truth: each is one layer (tests/import_graph.py lists them, bottom to top), and no
import, at module level or inside a function, runs up a layer or round a cycle."""

from __future__ import annotations

import tomllib
from pathlib import Path

from import_graph import LAYERS, LEVEL, read_graph

from abstaingen.config import BUILTIN_DOMAINS
from abstaingen.generators.builtin.domains import DOMAINS

REPO = Path(__file__).resolve().parents[1]
GRAPH = read_graph(REPO)


def test_no_import_runs_up_a_layer() -> None:
    upward = [f"{i.importer}:{i.line} ({GRAPH.modules[i.importer]}/) imports {i.imported} "
              f"({GRAPH.modules[i.imported]}/){' in a function' if i.in_function else ''}" for i in GRAPH.upward()]
    assert upward == []


def test_no_modules_import_each_other_round_a_cycle() -> None:
    assert GRAPH.cycles() == []


def test_the_graph_sees_the_imports_it_judges() -> None:
    """Guards the two tests above against reading nothing: known imports of each kind are in the graph."""
    edges = {(i.importer, i.imported, i.in_function) for i in GRAPH.imports}
    assert ("abstaingen.pipelines.pairs", "abstaingen.validators.validate", False) in edges
    assert ("abstaingen.flows.cli", "abstaingen.flows.generate", True) in edges  # inside a function
    assert ("abstaingen.reply_judges.llm", "abstaingen.reply_judges.base", False) in edges  # `from abstaingen.reply_judges.base import`
    assert len(GRAPH.modules) > 100


def test_every_installed_package_folder_is_a_layer() -> None:
    package_dir = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    assert {(folder, package) for package, folder in package_dir.items()} == {(f, p) for f, p, _ in LAYERS}
    assert set(LEVEL) == {folder for folder, _, _ in LAYERS}


def test_only_the_flows_import_prefect() -> None:
    """The pipelines are the Prefect-free core the flows, benchmarks and tests share."""
    importers = {GRAPH.modules[module] for module, names in GRAPH.third_party.items()
                 if any(name == "prefect" or name.startswith("prefect_") for name in names)}
    assert importers == {"flows"}


def test_the_config_knows_the_builtin_domains_by_their_blueprints_names() -> None:
    """The config sits below the generators, so it keeps the builtin domains' names as data."""
    assert tuple(DOMAINS) == BUILTIN_DOMAINS
