"""`tau2`: a domain of a tau2-bench checkout (sierra-research/tau2-bench), e.g. retail or airline.

Read, never run, on the host: the domain's `src/tau2/domains/D/{tools,data_model,utils}.py`, its database
(`data/tau2/domains/D/db.json` or `db.toml`), `policy.md` and `tasks.json`. The toolkit's `@is_tool` methods
become the tools: their kind from the decorator (WRITE, or `mutates_state=True`: commit; READ, GENERIC, THINK:
lookup), their argument schema from the signature's annotations and the docstring's `Args:`, and one example
call each from the first reference action in the domain's tasks that calls it (else from the database's fields).
The policy is the assistant's description. The implementation is `tau2_runtime.py` with the domain's three files
in it: it runs the domain's own code, in the sandbox only.
"""

from __future__ import annotations

import ast
import json
import re
import tomllib
from pathlib import Path
from typing import Any

from abstaingen.errors import AbstaingenError
from abstaingen.importers.base import ImportOptions, env_id_for, importer, require_file, source_of
from abstaingen.importers.python_source import examples_from_state, function_tool
from abstaingen.model import EnvironmentBundle, JsonValue, ToolKind, ToolSpec

RUNTIME = Path(__file__).with_name("tau2_runtime.py")


def _kind(decorator: ast.Call) -> ToolKind:
    tool_type = next((arg for arg in decorator.args[:1]), None)
    write = isinstance(tool_type, ast.Attribute) and tool_type.attr == "WRITE"
    mutates = next((kw.value for kw in decorator.keywords if kw.arg == "mutates_state"), None)
    if isinstance(mutates, ast.Constant) and mutates.value is not None:
        write = bool(mutates.value)
    return ToolKind.COMMIT if write else ToolKind.LOOKUP


def read_toolkit(source: str, path: Path) -> tuple[str, list[ToolSpec]]:
    """The toolkit class's name and its `@is_tool` methods as tools (without examples)."""
    tree = ast.parse(source, filename=str(path))
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        tools = []
        for method in node.body:
            decorator = next((d for d in getattr(method, "decorator_list", []) if isinstance(d, ast.Call)
                              and isinstance(d.func, ast.Name) and d.func.id == "is_tool"), None)
            if decorator is None or not isinstance(method, ast.FunctionDef):
                continue
            tools.append(function_tool(method, _kind(decorator)))
        if tools:
            return node.name, tools
    raise AbstaingenError(f"{path}: no class with @is_tool methods (is this a tau2 domain's tools.py?)")


def _database_class(source: str, path: Path) -> str:
    tree = ast.parse(source, filename=str(path))
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and any(isinstance(base, ast.Name) and base.id == "DB" for base in node.bases):
            return node.name
    raise AbstaingenError(f"{path}: no class derived from DB (the domain's database model)")


def _examples(tasks_path: Path, tools: list[ToolSpec]) -> dict[str, dict[str, JsonValue]]:
    """Per tool, the arguments of the first reference action in the tasks that calls it with all it requires."""
    if not tasks_path.is_file():
        return {}
    try:
        tasks = json.loads(tasks_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AbstaingenError(f"{tasks_path}: not readable JSON ({exc})") from None
    tasks = tasks.get("tasks", []) if isinstance(tasks, dict) else tasks
    by_name = {tool.name: tool for tool in tools}
    found: dict[str, dict[str, JsonValue]] = {tool.name: {} for tool in tools if not tool.input_schema["required"]}
    for task in tasks if isinstance(tasks, list) else []:
        criteria = task.get("evaluation_criteria") or {} if isinstance(task, dict) else {}
        if (task.get("initial_state") or {}).get("initialization_data"):
            continue  # its actions run on a changed database
        for action in criteria.get("actions") or []:
            tool, args = by_name.get(action.get("name")), action.get("arguments")
            if tool is None or tool.name in found or not isinstance(args, dict) or action.get("requestor",
                                                                                                 "assistant") != "assistant":
                continue
            properties, required = tool.input_schema["properties"], tool.input_schema["required"]
            if isinstance(properties, dict) and isinstance(required, list) and set(map(str, required)) <= set(args) \
                    <= set(properties):
                found[tool.name] = args
    return found


def _state(database: object, path: Path) -> tuple[dict[str, JsonValue], dict[str, bool]]:
    """The database as collections of records with an "id", and which collections were dicts keyed by id
    (with whether their records had an "id" of their own)."""
    if not isinstance(database, dict):
        raise AbstaingenError(f"{path}: expected the database as an object of collections")
    state: dict[str, JsonValue] = {}
    keyed: dict[str, bool] = {}
    for name, value in database.items():
        if isinstance(value, dict) and value and all(isinstance(record, dict) for record in value.values()):
            own = all("id" in record for record in value.values())
            keyed[name] = own
            state[name] = [record if own else {"id": key, **record} for key, record in value.items()]
        else:
            state[name] = value
    return state, keyed


def _implementation(domain: str, sources: dict[str, str], toolkit: str, database: str, keyed: dict[str, bool],
                    tools: list[ToolSpec]) -> str:
    module = f"tau2.domains.{domain}.tools"
    handlers = "\n\n".join(
        f"def {tool.name}(state, /, **args):\n    return call(state, {module!r}, {toolkit!r}, {database!r}, KEYED, "
        f"{tool.name!r}, args)" for tool in tools)
    return (f"{RUNTIME.read_text(encoding='utf-8')}\n\n# --- tau2-bench's {domain} domain, as read by `abstaingen env "
            f"import tau2` -----------------\n\nKEYED = {keyed!r}\nSOURCES = {json.dumps(sources, indent=0)}\n"
            f"install(SOURCES)\n\n\n{handlers}\n")


def keyed_collections(bundle: EnvironmentBundle) -> dict[str, bool]:
    """The collections the domain's database keys by id (and whether their records hold their own "id"), as
    the importer wrote them into the implementation (read, not run)."""
    found = re.search(r"^KEYED = (\{.*\})$", bundle.implementation, re.M)
    keyed = ast.literal_eval(found.group(1)) if found else None
    if not isinstance(keyed, dict):
        raise AbstaingenError(f"environment {bundle.env_id}: its implementation names no KEYED collections "
                              "(not one `env import tau2` wrote)")
    return keyed


@importer("tau2")
def import_tau2(root: Path, options: ImportOptions) -> EnvironmentBundle:
    domain = options.name
    if not domain or not re.fullmatch(r"[a-z][a-z0-9_]*", domain):
        known = sorted(p.name for p in (root / "src/tau2/domains").glob("*") if (p / "tools.py").is_file())
        raise AbstaingenError(f"env import tau2: name the domain with --name (in {root}: {', '.join(known) or 'none'})")
    code, data = root / "src/tau2/domains" / domain, root / "data/tau2/domains" / domain
    files = {f"tau2.domains.{domain}.{part}": require_file(code / f"{part}.py", f"the {domain} domain's {part}.py")
             for part in ("utils", "data_model", "tools")}
    db_path = next((p for p in (data / "db.json", data / "db.toml") if p.is_file()), None)
    if db_path is None:
        raise AbstaingenError(f"{data}: no db.json or db.toml (the {domain} domain's database; a checkout without "
                              "its large files lacks it)")
    sources = {name: path.read_text(encoding="utf-8") for name, path in files.items()}
    toolkit, tools = read_toolkit(sources[f"tau2.domains.{domain}.tools"], files[f"tau2.domains.{domain}.tools"])
    database_class = _database_class(sources[f"tau2.domains.{domain}.data_model"],
                                     files[f"tau2.domains.{domain}.data_model"])
    try:
        raw: Any = (json.loads(db_path.read_text(encoding="utf-8")) if db_path.suffix == ".json"
                    else tomllib.loads(db_path.read_text(encoding="utf-8")))
    except (UnicodeDecodeError, json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise AbstaingenError(f"{db_path}: not a readable database ({exc})") from None
    state, keyed = _state(raw, db_path)
    tasks_path, policy_path = data / "tasks.json", data / "policy.md"
    examples = _examples(tasks_path, tools)
    examples = {**examples_from_state([tool for tool in tools if tool.name not in examples], state), **examples}
    tools = [tool.model_copy(update={"examples": [examples[tool.name]] if tool.name in examples else []})
             for tool in tools]
    read = [*files.values(), db_path, *(p for p in (tasks_path, policy_path) if p.is_file())]
    source = source_of("tau2", root, read, options)
    # the domain's policy is what tau2 gives its agent as the system prompt: the assistant's description here
    policy = policy_path.read_text(encoding="utf-8").strip() if policy_path.is_file() else ""
    return EnvironmentBundle(
        env_id=env_id_for(domain, source), domain=domain, tools=tools, initial_state=state,
        description=policy or f"tau2-bench's {domain} domain ({toolkit}).",
        implementation=_implementation(domain, sources, toolkit, database_class, keyed, tools),
        origin="imported", source=source)
