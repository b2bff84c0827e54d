"""`agentabstain`: an environment of an AgentAbstain data folder (AntiQuality/agentabstain's
`abstention_factory/`, or a folder in its layout), e.g. `--name retail_orders`.

Read, never run, on the host: `environments/<name>/environment.py`, whose class derives from AgentAbstain's
`BaseEnvironment` and registers its tools on `self.mcp` (`@self.mcp.tool(...)` inside `_register_tools`), the
package's other modules (its `schema.py`), and the first task's act side's `initial_states/<name>.json` (by path)
as the state, else what the class's `get_example_state()` returns when that is a literal. Each registered function becomes a tool:
its name from the decorator or the function, its description from the decorator or the docstring, its argument
schema from the signature's annotations (`Annotated[..., Field(description=...)]` too), and its kind from the
class's `tool_kinds` or `mutation_tools` (a mutation is a commit). Example calls come from the state's fields.
The implementation is `agentabstain_runtime.py` with the environment's file in it: it runs the environment's own
class, in the sandbox only.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from abstaingen.errors import AbstaingenError
from abstaingen.importers.base import ImportOptions, env_id_for, importer, require_file, source_of
from abstaingen.importers.python_source import examples_from_state, function_tool
from abstaingen.model import EnvironmentBundle, ToolKind, ToolSpec

RUNTIME = Path(__file__).with_name("agentabstain_runtime.py")
COMMIT_KINDS = {"commit", "write", "mutation", "mutate", "action", "create", "update", "delete"}
_SKIPPED = frozenset({"self", "ctx", "context"})  # FastMCP hands a tool its context; the agent never passes it


def _literal(node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):  # not a literal: `set()`, a call, a name
        return None


def _class_attributes(cls: ast.ClassDef) -> dict[str, object]:
    found: dict[str, object] = {}
    for node in cls.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name):
            found[target.id] = _literal(value)
    return found


def _registration(decorator: ast.expr) -> tuple[str | None, str | None] | None:
    """(name, description) when the decorator registers a tool on an mcp server (`@self.mcp.tool(...)`)."""
    call = decorator if isinstance(decorator, ast.Call) else None
    target = call.func if call is not None else decorator
    if not (isinstance(target, ast.Attribute) and target.attr == "tool"):
        return None
    owner = target.value
    if not (isinstance(owner, ast.Attribute) and owner.attr == "mcp" or isinstance(owner, ast.Name) and owner.id == "mcp"):
        return None
    texts = {kw.arg: kw.value.value for kw in (call.keywords if call else [])
             if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str)}
    positional = call.args[0] if call is not None and call.args else None
    if isinstance(positional, ast.Constant) and isinstance(positional.value, str):
        texts.setdefault("name", positional.value)
    return texts.get("name"), texts.get("description")


def read_environment(source: str, path: Path) -> tuple[str, str, list[ToolSpec]]:
    """The environment class's name, its description and its registered tools (without examples)."""
    tree = ast.parse(source, filename=str(path))
    for cls in tree.body:
        if not (isinstance(cls, ast.ClassDef) and any(
                (isinstance(b, ast.Name) and b.id == "BaseEnvironment") or
                (isinstance(b, ast.Attribute) and b.attr == "BaseEnvironment") for b in cls.bases)):
            continue
        attributes = _class_attributes(cls)
        kinds = attributes.get("tool_kinds") if isinstance(attributes.get("tool_kinds"), dict) else {}
        mutations = attributes.get("mutation_tools")
        mutating = set(mutations) if isinstance(mutations, set | list | tuple) else set()
        tools: list[ToolSpec] = []
        for function in ast.walk(cls):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            registered = next((r for d in function.decorator_list if (r := _registration(d)) is not None), None)
            if registered is None:
                continue
            name = registered[0] or function.name
            declared = str(kinds.get(name, "")).lower() if isinstance(kinds, dict) else ""
            kind = (ToolKind.COMMIT if declared in COMMIT_KINDS or name in mutating else
                    ToolKind.VERIFY if declared == "verify" else ToolKind.LOOKUP)
            tools.append(function_tool(function, kind, name, registered[1], _SKIPPED))
        if not tools:
            raise AbstaingenError(f"{path}: class {cls.name} registers no tool with @self.mcp.tool() (an environment "
                                  "abstaingen exported is a bundle: import it with `env import bundle`)")
        short = attributes.get("short_name")
        about = ast.get_docstring(cls) or (short if isinstance(short, str) and short else cls.name)
        return cls.name, " ".join(about.split()), tools
    raise AbstaingenError(f"{path}: no class derived from BaseEnvironment (is this an AgentAbstain environment?)")


def known_fields(state: dict) -> dict[str, list[str] | None]:
    """Per entry of the imported state, the fields its records (or its object) hold; None: anything else."""
    known: dict[str, list[str] | None] = {}
    for name, value in state.items():
        if isinstance(value, list) and value and all(isinstance(r, dict) for r in value):
            known[name] = sorted({k for r in value for k in r})
        elif isinstance(value, dict):
            known[name] = sorted(value)
        else:
            known[name] = None
    return known


def _example_state(source: str, path: Path) -> dict | None:
    """What the class's `get_example_state()` returns, when that is a literal (read, not run)."""
    for node in ast.walk(ast.parse(source, filename=str(path))):
        if isinstance(node, ast.FunctionDef) and node.name == "get_example_state":
            returned = next((n.value for n in ast.walk(node) if isinstance(n, ast.Return) and n.value is not None), None)
            value = _literal(returned) if returned is not None else None
            return value if isinstance(value, dict) else None
    return None


def _initial_state(data: Path, name: str, source: str, code: Path) -> tuple[dict, Path | None]:
    """The first task's act side's state (and its file), else the class's example state."""
    states = sorted((data / "tasks").glob(f"**/initial_states/{name}.json"),  # an act side's world comes first
                    key=lambda p: (p.parent.parent.name != "act", p.as_posix()))
    if not states:
        if (example := _example_state(source, code)) is not None:
            return example, None
        raise AbstaingenError(f"{data / 'tasks'}: no task holds initial_states/{name}.json, and {code} has no "
                              "get_example_state returning a literal (the environment's state)")
    try:
        state = json.loads(states[0].read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AbstaingenError(f"{states[0]}: not a readable state ({exc})") from None
    if not isinstance(state, dict):
        raise AbstaingenError(f"{states[0]}: expected the state as a JSON object")
    return state, states[0]


def _data_folder(root: Path) -> Path:
    for folder in (root, root / "abstention_factory"):
        if (folder / "environments").is_dir():
            return folder
    raise AbstaingenError(f"{root}: no environments/ folder (an AgentAbstain data folder, or a checkout holding "
                          "abstention_factory/)")


def their_package(bundle: EnvironmentBundle) -> tuple[dict[str, str], str] | None:
    """For an environment `env import agentabstain` read: its package's files as they were read (file name ->
    source) and its class's name, both read from the implementation, not run; None for any other."""
    if bundle.source is None or bundle.source.kind != "agentabstain":
        return None
    start = bundle.implementation.find("\nSOURCES = ")
    if start < 0:
        return None
    sources, _ = json.JSONDecoder().raw_decode(bundle.implementation, start + len("\nSOURCES = "))
    files = {f"{name.rpartition('.')[2]}.py": text for name, text in sources.items()}
    for node in ast.parse(files.get("environment.py", "")).body:
        if isinstance(node, ast.ClassDef) and any(getattr(b, "id", getattr(b, "attr", "")) == "BaseEnvironment"
                                                  for b in node.bases):
            return files, node.name
    return None


@importer("agentabstain")
def import_agentabstain(root: Path, options: ImportOptions) -> EnvironmentBundle:
    data = _data_folder(root)
    name = options.name
    if not name or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        known = sorted(p.parent.name for p in (data / "environments").glob("*/environment.py"))
        raise AbstaingenError(f"env import agentabstain: name the environment with --name (in {data}: "
                              f"{', '.join(known) or 'none'})")
    package = data / "environments" / name
    code = require_file(package / "environment.py", f"the {name} environment's class")
    source_text = code.read_text(encoding="utf-8")
    environment, about, tools = read_environment(source_text, code)
    state, state_file = _initial_state(data, name, source_text, code)
    examples = examples_from_state(tools, state)
    tools = [t.model_copy(update={"examples": [examples[t.name]] if t.name in examples else []}) for t in tools]
    prefix = f"abstention_factory.environments.{name}"
    beside = sorted(p for p in package.glob("*.py") if p.name not in ("environment.py", "__init__.py"))
    sources = {f"{prefix}.{p.stem}": p.read_text(encoding="utf-8") for p in beside}
    sources[f"{prefix}.environment"] = source_text  # last: it imports the others
    handlers = "\n\n".join(f"def {tool.name}(state, /, **args):\n    return call(state, {prefix + '.environment'!r}, "
                           f"{environment!r}, {tool.name!r}, args, KNOWN)" for tool in tools)
    implementation = (f"{RUNTIME.read_text(encoding='utf-8')}\n\n# --- AgentAbstain's {name} environment, as read by "
                      f"`abstaingen env import agentabstain` ---\n\nKNOWN = {known_fields(state)!r}\n"
                      f"SOURCES = {json.dumps(sources, indent=0)}\ninstall(SOURCES)\n\n\n{handlers}\n")
    source = source_of("agentabstain", root, [code, *beside, *([state_file] if state_file else [])], options)
    return EnvironmentBundle(env_id=env_id_for(name, source), domain=name, tools=tools, initial_state=state,
                             description=about, implementation=implementation, origin="imported", source=source)
