"""Packaging: the repo's top-level folders install under the abstaingen namespace, every package of them;
every third-party package the code imports is declared, and the ones of an extra are imported only when a
command needs them; the wheel carries every file the code reads at run time, and works installed."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import json
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# Repo folder -> the package it installs as ("sandboxes" -> "abstaingen.sandboxes").
PACKAGE_OF = {folder: namespace for namespace, folder in PROJECT["tool"]["setuptools"]["package-dir"].items()}

# Modules whose import-time imports may come from an extra: nothing imports them when their file is loaded,
# they are loaded by the function that needs them (after abstaingen.optional.require). The two export
# templates run in the environment of whoever uses the export, never inside abstaingen.
LAZY_MODULES = {
    "abstaingen.providers.openai_api": "llm",
    "abstaingen.providers.anthropic_api": "llm",
    # `abstaingen eval` (after require("inspect_ai")), `inspect eval` on an export, and the evaluate flow
    **{f"abstaingen.evaluation.{m}": "inspect" for m in ("pairs_task", "ood_task", "judges", "policies", "report",
                                                         "html", "run")},
    "abstaingen.flows.evaluate": "inspect",
    "abstaingen.exporters.agentabstain_runtime": "test",  # copied into `export agentabstain`
}
# Names the tests import that are no distribution: the tests' own helper modules (found on disk below)
# and the task file an Inspect export writes, imported from the export's folder.
TEST_LOCAL = {"abstaingen_task"}
# What a copied export template imports only inside a function, from the harness it runs in: AgentAbstain's own
# package and FastMCP (in its requirements). abstaingen itself imports the module for its naming rule alone.
FROM_THE_HARNESS = {"abstaingen.exporters.agentabstain_multi": {"abstention_factory", "fastmcp"}}


def test_every_package_folder_is_listed_and_importable() -> None:
    mapping = PROJECT["tool"]["setuptools"]["package-dir"]
    listed = set(PROJECT["tool"]["setuptools"]["packages"])
    on_disk = set()
    for namespace, folder in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder).parts
            on_disk.add(".".join((namespace, *relative)))
    assert on_disk - listed == set(), "add these to [tool.setuptools] packages"
    for name in sorted(on_disk):
        assert importlib.import_module(name).__file__.startswith(str(ROOT))


# --- what the code imports ----------------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    file: str  # relative to the repo
    line: int
    module: str  # dotted, absolute
    eager: bool  # runs when the file is imported: not inside a function, not under `if TYPE_CHECKING:`

    @property
    def top(self) -> str:
        return self.module.split(".")[0]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_in(path: Path, module: str) -> list[Import]:
    """Every import statement of the file, relative ones made absolute; `from a import b` yields both
    a and a.b (b may be a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    file = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    found: list[Import] = []

    def visit(node: ast.AST, eager: bool) -> None:
        if isinstance(node, ast.Import):
            found.extend(Import(file, node.lineno, alias.name, eager) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[:len(package) - node.level + 1], *([base] if base else [])])
            if base != "__future__":
                found.append(Import(file, node.lineno, base, eager))
                found.extend(Import(file, node.lineno, f"{base}.{alias.name}", eager) for alias in node.names)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            eager = False
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, False)
            for child in node.orelse:
                visit(child, eager)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, eager)

    visit(tree, True)
    return found


def source_files() -> Iterator[tuple[Path, str]]:
    """Every .py file that installs, with its module name."""
    for folder, namespace in PACKAGE_OF.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            yield path, ".".join((namespace, *parts))


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match, requirement
    return _normalized(match[1])


def _needs_an_extra(requirement: str) -> bool:
    return ";" in requirement and "extra" in requirement.split(";", 1)[1]


def declared(*extras: str) -> set[str]:
    """Distributions (normalized names) the default install declares, plus those of `extras`, with
    self-references (abstaingen[llm,hf]) followed."""
    names = {_requirement_name(r) for r in PROJECT["project"]["dependencies"]}
    todo, seen = list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for requirement in PROJECT["project"]["optional-dependencies"][extra]:
            name = _requirement_name(requirement)
            if name == "abstaingen":
                todo += [e.strip() for e in requirement.split("[", 1)[1].split("]", 1)[0].split(",")]
            else:
                names.add(name)
    return names | {required for name in names if not _provides_modules(name) for required in _requires(name)}


@cache
def _provides_modules(distribution: str) -> bool:
    """False for a meta-package such as fastmcp, whose modules come from what it requires (fastmcp-slim)."""
    return any(distribution in dists for dists in distributions_of().values())


def _requires(distribution: str) -> set[str]:
    try:
        requirements = importlib.metadata.requires(distribution) or []
    except importlib.metadata.PackageNotFoundError:
        return set()
    return {_requirement_name(r) for r in requirements if not _needs_an_extra(r)}


@cache
def distributions_of() -> dict[str, set[str]]:
    """Import name -> the installed distributions (normalized) that provide it."""
    return {name: {_normalized(d) for d in dists} for name, dists in importlib.metadata.packages_distributions().items()}


def third_party(imports: list[Import], first_party: set[str]) -> list[Import]:
    """The imports of neither the standard library nor `first_party`."""
    return [i for i in imports if i.top not in sys.stdlib_module_names and i.top not in first_party]


def test_every_third_party_package_the_code_imports_is_declared_directly() -> None:
    # A package that only arrives through another one (numpy through datasets, say) disappears when that
    # one drops it, or when it moves to an extra: declare each, with the extra that needs it if any.
    extras = PROJECT["project"]["optional-dependencies"]
    runtime = declared(*(extra for extra in extras if extra != "test"))
    problems = []
    for path, module in source_files():
        allowed = declared(LAZY_MODULES[module]) if module in LAZY_MODULES else runtime
        problems += _problems(third_party(imports_in(path, module), {"abstaingen", *FROM_THE_HARNESS.get(module, ())}),
                              allowed)
    assert not problems, "\n".join(problems)


def _problems(imports: list[Import], allowed: set[str], why: str = "which pyproject does not declare") -> list[str]:
    problems = set()
    for found in imports:
        dists = distributions_of().get(found.top)
        if not dists:
            problems.add(f"{found.file}:{found.line}: no installed distribution provides {found.top!r}")
        elif not dists & allowed:
            problems.add(f"{found.file}:{found.line}: {found.top!r} comes from {'/'.join(sorted(dists))}, {why}")
    return sorted(problems, key=lambda problem: (problem.split(":")[0], int(problem.split(":")[1])))


# Scripts under tests/ that run in another project's environment, never in the suite's
ELSEWHERE = {ROOT / "tests" / "tools" / "tau2_check.py": "runs in a venv with tau2-bench installed"}


def test_the_test_extra_brings_everything_the_tests_import() -> None:
    # tests/data holds other projects' code as the importers read it (a tau2 domain), never imported by a test
    sources = [p for p in (ROOT / "tests").rglob("*.py") if (ROOT / "tests" / "data") not in p.parents
               and p not in ELSEWHERE]
    local = TEST_LOCAL | {p.stem for p in sources} | {p.parent.name for p in sources if p.name == "__init__.py"}
    problems = []
    for path in sorted(sources):
        problems += _problems(third_party(imports_in(path, path.stem), {"abstaingen", *local}), declared("test"))
    assert not problems, "\n".join(problems)


def test_only_the_default_install_is_imported_when_a_module_loads() -> None:
    # What an extra brings is imported inside the function that needs it (see abstaingen/optional.py), and
    # a module that imports it at the top is itself imported only that way.
    core = declared()
    problems = []
    for path, module in source_files():
        imports = imports_in(path, module)
        if module not in LAZY_MODULES:
            problems += _problems([i for i in third_party(imports, {"abstaingen"}) if i.eager], core,
                                  "which the default install lacks: import it inside the function that needs it")
        # a lazy module may load another of its own extra at once: both are loaded only after require()
        problems += [f"{i.file}:{i.line}: imports {i.module} when it loads; import it inside the function "
                     "that needs it" for i in imports
                     if i.eager and i.module in LAZY_MODULES and LAZY_MODULES[i.module] != LAZY_MODULES.get(module)]
    assert not problems, "\n".join(problems)


def test_the_import_checker_sees_lazy_relative_and_type_only_imports(tmp_path: Path) -> None:
    path = tmp_path / "probe.py"  # read as if it were abstaingen/model/probe.py
    path.write_text("from typing import TYPE_CHECKING\nimport numpy.linalg as la\nfrom . import store\n"
                    "from ..x import y\nif TYPE_CHECKING:\n    import openai\nelse:\n    import yaml\n"
                    "def f():\n    import datasets\nclass C:\n    import jinja2\n", encoding="utf-8")
    found = {(i.module, i.eager) for i in imports_in(path, "abstaingen.model.probe")}
    assert found == {("typing", True), ("typing.TYPE_CHECKING", True), ("numpy.linalg", True),
                     ("abstaingen.model", True), ("abstaingen.model.store", True), ("abstaingen.x", True),
                     ("abstaingen.x.y", True), ("openai", False), ("yaml", True), ("datasets", False),
                     ("jinja2", True)}
    assert _problems([Import("f.py", 1, "numpy", True)], {"pyyaml"}) == [
        "f.py:1: 'numpy' comes from numpy, which pyproject does not declare"]
    assert _problems([Import("f.py", 2, "not_a_package_xyz", True)], set()) == [
        "f.py:2: no installed distribution provides 'not_a_package_xyz'"]
    assert _problems([Import("f.py", 3, "yaml", True)], {"pyyaml"}) == []


# --- the default install, without the extras ---------------------------------------------------------

EXTRA_HINT = {extra: f"install abstaingen with its [{extra}] extra (in a clone: pip install -e '.[{extra}]')"
              for extra in ("llm", "hf")}


def _closure(names: set[str]) -> set[str]:
    """The installed distributions `names` need, with what they need in turn (and the extras they ask for)."""
    wanted: dict[str, set[str]] = {name: set() for name in names}
    todo = list(names)
    while todo:
        name = todo.pop()
        try:
            requirements = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for requirement in requirements:
            marker = requirement.split(";", 1)[1] if ";" in requirement else ""
            extra = re.search(r"""extra\s*==\s*['"]([^'"]+)['"]""", marker)
            if extra and _normalized(extra[1]) not in wanted[name]:
                continue
            required = _requirement_name(requirement)
            head = requirement.split(";", 1)[0]
            asked = {_normalized(e) for e in head.split("[", 1)[1].split("]", 1)[0].split(",")} if "[" in head else set()
            if required not in wanted or not asked <= wanted[required]:
                wanted.setdefault(required, set()).update(asked)
                todo.append(required)
    return set(wanted)


def hidden_without_extras() -> list[str]:
    """Import names that only distributions outside the default install's dependency tree provide."""
    default_install = _closure(declared()) | {"abstaingen"}
    return sorted(name for name, dists in distributions_of().items()
                  if not dists & default_install and name.isidentifier() and not name.startswith("__editable__"))


def test_every_command_that_needs_no_extra_works_without_them(tmp_path: Path) -> None:
    hidden = hidden_without_extras()
    assert {"openai", "anthropic", "pyarrow", "datasets", "huggingface_hub", "pytest"} <= set(hidden)
    assert not {"prefect", "mcp", "numpy", "jsonschema", "yaml", "jinja2"} & set(hidden)
    run = subprocess.run([sys.executable, str(ROOT / "tests" / "tools" / "without_extras.py"), json.dumps(hidden),
                          json.dumps(sorted(LAZY_MODULES)), str(tmp_path)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["import_failures"] == {}
    commands = report["commands"]
    helps = [name for name in commands if name.endswith("--help")]
    assert len(helps) >= 15 and "sandbox build-image --help" in helps
    works = [*helps, "release verify", "release diff", "export agentabstain", "export inspect"]
    assert {name: commands[name] for name in works if commands[name]["code"] != 0} == {}

    def error(text: str) -> dict[str, object]:
        return {"code": 2, "stderr": f"abstaingen: error: {text}"}

    def shown(name: str) -> dict[str, object]:
        return {key: commands[name][key] for key in ("code", "stderr")}

    assert shown("export hf") == error(f"export hf needs the pyarrow package: {EXTRA_HINT['hf']}")
    assert shown("export hf --push") == error(f"export hf --push needs the huggingface_hub package: {EXTRA_HINT['hf']}")
    assert report["push_wrote_nothing"]
    assert shown("generate (llm backend)") == error(f"the llm backend needs the openai package: {EXTRA_HINT['llm']}")
    assert shown("release judge") == error(f"the llm judge needs the anthropic package: {EXTRA_HINT['llm']}")
    assert commands["models check"]["code"] == 1
    assert f"the openai provider needs the openai package: {EXTRA_HINT['llm']}" in commands["models check"]["stdout"]
    assert f"the anthropic provider needs the anthropic package: {EXTRA_HINT['llm']}" in commands["models check"]["stdout"]
    assert report["decontamination"] == ("decontamination against a Hugging Face dataset (decontamination.hf) needs "
                                         f"the datasets package: {EXTRA_HINT['hf']}")


# --- the wheel --------------------------------------------------------------------------------------

# Files the code opens at run time (beside importing .py files): each must be in the wheel.
READ_AT_RUN_TIME = [
    "sandboxes/Dockerfile",  # `sandbox build-image`, and the image tag hashes it
    "sandboxes/runtime_server.py",  # copied into the sandbox image, run in bwrap and subprocess sandboxes
    "sandboxes/confine.py",
    "exporters/agentabstain_runtime.py",  # copied into `export agentabstain`
    "exporters/agentabstain_multi.py",  # copied into `export agentabstain`
    *(f"prompts/{p.name}" for p in sorted((ROOT / "prompts").glob("*.j2"))),  # the llm backend's templates
    *(f"generators/ood/builtin/roles/{p.name}"  # the builtin OOD roles
      for p in sorted((ROOT / "generators" / "ood" / "builtin" / "roles").glob("*.yaml"))),
]


def _in_wheel(repo_path: str) -> str:
    folder, _, rest = repo_path.partition("/")
    return "/".join([*PACKAGE_OF[folder].split("."), rest])


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built from a copy of what it is made of (a build leaves build/ and egg-info behind)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    for folder in PACKAGE_OF:
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("wheel")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                            "-q", "-w", str(out), str(source)], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    [built] = out.glob("abstaingen-*.whl")
    return built


def test_the_wheel_holds_every_file_the_code_reads_and_the_licence(wheel: Path) -> None:
    assert len(READ_AT_RUN_TIME) > 15
    names = set(zipfile.ZipFile(wheel).namelist())
    assert [p for p in READ_AT_RUN_TIME if _in_wheel(p) not in names] == []
    # Every file of a package folder ships, so a data file added later cannot be forgotten; the folders'
    # README.md files are for whoever reads the repository.
    shipped = [str(p.relative_to(ROOT)) for folder in PACKAGE_OF for p in sorted((ROOT / folder).rglob("*"))
               if p.is_file() and "__pycache__" not in p.parts and p.suffix not in {".pyc", ".md"}]
    assert [p for p in shipped if _in_wheel(p) not in names] == []
    [dist_info] = {name.split("/")[0] for name in names if ".dist-info/" in name}
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read(f"{dist_info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
        metadata = archive.read(f"{dist_info}/METADATA").decode()
    assert b"Copyright (c) 2026 The abstaingen authors" in (ROOT / "LICENSE").read_bytes()
    assert "License-Expression: MIT" in metadata and "License-File: LICENSE" in metadata
    requires = {line.removeprefix("Requires-Dist: ") for line in metadata.splitlines() if line.startswith("Requires-Dist:")}
    assert {r for r in requires if r.startswith(("openai", "anthropic", "datasets", "huggingface"))} == {
        'openai<4,>=3; extra == "llm"', 'anthropic<3,>=2; extra == "llm"',
        'datasets<6,>=3.6; extra == "hf"', 'huggingface_hub<3,>=2; extra == "hf"'}
    assert {"numpy<3,>=2", "jsonschema<5,>=4.20", "jinja2<4,>=3.1"} <= requires


def test_the_installed_wheel_reads_its_package_data(wheel: Path, tmp_path: Path) -> None:
    # Installed on its own (its dependencies come from this environment), outside the repository: the
    # image tag reads the Dockerfile, the prompts load, the exporters find their runtime files.
    target = tmp_path / "site"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target",
                              str(target), str(wheel)], capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr[-3000:]
    probe = f"""
import sys
sys.path.insert(0, {str(target)!r})
import abstaingen.exporters.agentabstain as agentabstain, abstaingen.exporters.inspect_eval as inspect_eval
import abstaingen.prompts as prompts
from abstaingen.prompts import FOLDER, _environment, template_hash
from abstaingen.sandboxes import backends, image
for module in (agentabstain, inspect_eval, image, prompts):
    assert module.__file__.startswith({str(target)!r}), module.__file__
names = sorted(p.stem for p in FOLDER.glob("*.j2"))
for name in names:
    _environment().get_template(name + ".j2")
    template_hash(name)
assert agentabstain.TOOLS_MODULE.is_file() and agentabstain.MULTI_MODULE.is_file() and backends.CONFINE.is_file()
assert "pairs_task" in inspect_eval.TASK
print(len(names), image.image_tag())
"""
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    count, tag = run.stdout.split()
    assert int(count) == len(list((ROOT / "prompts").glob("*.j2"))) and tag.startswith("abstaingen-sandbox:")
