"""`plain`: an environment described plainly, for anything no other importer reads.

The folder holds `tools.json` (a list of tools: name, description, kind lookup/verify/commit, input_schema as JSON
Schema, and optionally examples, effect, undone_by), `state.json` (collection -> list of records, each with an
"id"), `handlers.py` (one `def tool(state, **args)` per tool over that state; raising ValueError fails the call)
and, optionally, `about.json` ({"domain": ..., "description": ...}). See importers/README.md.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from abstaingen.errors import AbstaingenError
from abstaingen.importers.base import ImportOptions, env_id_for, importer, require_file, source_of
from abstaingen.model import EnvironmentBundle, ToolSpec


def _json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AbstaingenError(f"{path}: not readable JSON ({exc})") from None


@importer("plain")
def import_plain(root: Path, options: ImportOptions) -> EnvironmentBundle:
    tools_path, state_path = require_file(root / "tools.json", "the tools"), require_file(root / "state.json", "the state")
    handlers_path = require_file(root / "handlers.py", "the tools' handlers")
    read = [tools_path, state_path, handlers_path]
    about: object = {}
    if (root / "about.json").is_file():
        read.append(root / "about.json")
        about = _json(root / "about.json")
    tools, state = _json(tools_path), _json(state_path)
    if not isinstance(tools, list) or not tools:
        raise AbstaingenError(f"{tools_path}: expected a non-empty JSON list of tools")
    if not isinstance(state, dict) or not all(isinstance(records, list) for records in state.values()):
        raise AbstaingenError(f"{state_path}: expected a JSON object of collections, each a list of records")
    if not isinstance(about, dict):
        raise AbstaingenError(f"{root / 'about.json'}: expected a JSON object")
    specs = []
    for index, tool in enumerate(tools):
        try:
            specs.append(ToolSpec.model_validate(tool))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(map(str, first["loc"]))
            raise AbstaingenError(f"{tools_path}: tool {index + 1}: {where}: {first['msg']}") from None
    domain = str(about.get("domain") or options.name or root.resolve().name)
    source = source_of("plain", root, read, options)
    try:
        return EnvironmentBundle(
            env_id=env_id_for(domain, source), domain=domain, tools=specs, initial_state=state,
            description=str(about.get("description") or f"the {domain} environment imported from {root}"),
            implementation=handlers_path.read_text(encoding="utf-8"), origin="imported", source=source)
    except ValidationError as exc:
        raise AbstaingenError(f"{root}: {exc.errors()[0]['msg']}") from None
