"""Runs abstaingen as installed without its extras: the packages named in argv[1] (a JSON list of import
names) are hidden before anything is imported, so importing one fails as if it were not installed.

    python without_extras.py HIDDEN_JSON LAZY_MODULES_JSON WORK_DIR

Imports every module of abstaingen but LAZY_MODULES, publishes a small builtin release in WORK_DIR, runs
every command that needs no extra and the ones that do, and prints a JSON report on stdout: modules that
failed to import, and per command its exit code and the last line it wrote to stderr.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import io
import json
import sys
import traceback
from pathlib import Path

HIDDEN = set(json.loads(sys.argv[1]))


class Hide(importlib.abc.MetaPathFinder):
    """First on sys.meta_path: a hidden package is not found, exactly as when it is not installed."""

    def find_spec(self, fullname: str, path: object, target: object = None) -> None:
        if fullname.partition(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


sys.meta_path.insert(0, Hide())
for loaded in [m for m in sys.modules if m.partition(".")[0] in HIDDEN]:  # imported at start-up (.pth files)
    del sys.modules[loaded]

LAZY = set(json.loads(sys.argv[2]))
WORK = Path(sys.argv[3])
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for builtin_fixtures

import argparse  # noqa: E402
import importlib  # noqa: E402
import pkgutil  # noqa: E402

import abstaingen  # noqa: E402


def every_module() -> list[str]:
    names = ["abstaingen"]
    for found in pkgutil.walk_packages(abstaingen.__path__, "abstaingen."):
        if not found.name.endswith(".__main__"):  # importing it runs the command line
            names.append(found.name)
    return sorted(set(names))


def import_failures() -> dict[str, str]:
    failures = {}
    for name in every_module():
        if name in LAZY:
            continue
        try:
            importlib.import_module(name)
        except Exception as exc:
            failures[name] = f"{type(exc).__name__}: {exc}"
    return failures


def leaf_commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += leaf_commands(sub, (*prefix, name)) or [(*prefix, name)]
    return found


def run(argv: list[str]) -> dict[str, object]:
    from abstaingen.flows import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except BaseException as exc:  # reported, not raised: the report must come out
            code = f"raised {type(exc).__name__}: {exc}"
            traceback.print_exc()
    lines = err.getvalue().strip().splitlines()
    return {"code": code, "stderr": lines[-1] if lines else "", "stdout": out.getvalue()[-1000:]}


def publish() -> Path:
    from builtin_fixtures import builtin_bundle, builtin_pair

    from abstaingen.model import FunnelStage, Release, Scenario
    from abstaingen.store import publish_release

    pairs = [builtin_pair(s) for s in Scenario]
    draft = Release(name="demo", version="", created_by="test", config_fingerprint="f" * 64, sandbox="local",
                    counts={}, total_pairs=0, seed=11, funnel=[FunnelStage(stage="task", received=len(pairs),
                                                                           passed=len(pairs))])
    publish_release(WORK / "releases", draft, pairs, [builtin_bundle("travel")])
    return WORK / "releases" / "demo" / "v1"


MODELS = """
[providers.oa]
kind = "openai"
api_key_env = "WITHOUT_EXTRAS_KEY"
[providers.an]
kind = "anthropic"
api_key_env = "WITHOUT_EXTRAS_KEY"
[models.writer]
name = "writer-1"
provider = "oa"
family = "gpt"
[models.checker]
name = "checker-1"
provider = "an"
family = "claude"
[roles]
generator = "writer"
judge = "checker"
"""


def main() -> None:
    from abstaingen.config import DecontaminationConfig, HfTextSource
    from abstaingen.errors import AbstaingenError
    from abstaingen.flows import cli
    from abstaingen.validators.decontaminate import load_references

    report: dict[str, object] = {"import_failures": import_failures()}
    commands: dict[str, object] = {"--help": run(["--help"])}
    for leaf in leaf_commands(cli.build_parser()):
        commands[" ".join(leaf) + " --help"] = run([*leaf, "--help"])
    release = publish()
    commands["release verify"] = run(["release", "verify", str(release)])
    commands["release diff"] = run(["release", "diff", str(release), str(release)])
    for exporter in ("hf", "agentabstain", "inspect"):
        commands[f"export {exporter}"] = run(["export", exporter, str(release), str(WORK / exporter)])
    commands["export hf --push"] = run(["export", "hf", str(release), str(WORK / "pushed"), "--push", "org/name"])
    report["push_wrote_nothing"] = not (WORK / "pushed").exists()

    llm = WORK / "llm.toml"
    llm.write_text(MODELS + '[backends]\ndefault = "llm"\n', encoding="utf-8")
    judged = WORK / "judged.toml"
    judged.write_text(MODELS, encoding="utf-8")
    seeds = WORK / "seeds.jsonl"
    seeds.write_text(json.dumps({"instruction": "Cancel my hotel booking for next week."}) + "\n", encoding="utf-8")
    commands["generate (llm backend)"] = run(["generate", "--config", str(llm), "--seeds", str(seeds),
                                              "--output", str(WORK / "out"), "--sandbox", "local", "--seed", "1"])
    commands["release judge"] = run(["release", "judge", str(release), "--config", str(judged), "--sandbox", "local"])
    commands["models check"] = run(["models", "check", "--config", str(judged)])
    report["commands"] = commands
    try:
        load_references(DecontaminationConfig(hf=(HfTextSource(name="org/texts"),)))
        report["decontamination"] = "loaded"
    except AbstaingenError as exc:
        report["decontamination"] = str(exc)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
