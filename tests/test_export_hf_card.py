"""The Hub export as its users meet it: the card's evaluation recipe followed as written (download from a
stand-in Hub, verify, the Inspect task under `inspect eval` with the card's scripted agent, one side served by
`env serve` to an MCP client, the card's scoring snippet), the tools each `tasks` row offers, the reply judge's
figures in the card, the OOD export's default config, and `--push`: checked with the Hub before anything is
written, one line for every failure, and an export written earlier pushed only once it proves to be one."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import anyio
import pyarrow.parquet as pq
import pytest
from builtin_fixtures import builtin_bundle, builtin_pair
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from packaging.requirements import Requirement
from standin.hub import StandInHub

from abstaingen.exporters.hf import (
    REPLY_JUDGE_ACCURACY,
    TaskRecord,
    data_file,
    offered_tools,
    repository_url,
    task_records,
)
from abstaingen.exporters.hub import check_export_folder
from abstaingen.flows import cli
from abstaingen.model import FunnelStage, Release, Scenario
from abstaingen.pipelines.pairs import stamped
from abstaingen.records import from_row
from abstaingen.reply_judges import get_judge
from abstaingen.reply_judges.corpus import evaluate, load_corpus
from abstaingen.store import dataset_canary, load_release, publish_release

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
CANARY_TIME = "2026-12-01T00:00:00+00:00"


def small_release(output: Path, name: str = "demo") -> Path:
    """One pair per scenario in the travel domain (S5's abstain side hides the tools that would deliver)."""
    canary = dataset_canary(output / name)
    pairs = [builtin_pair(s, 0, "travel") for s in Scenario]
    draft = Release(name=name, version="", created_by="abstaingen test", config_fingerprint="f" * 64, sandbox="local",
                    counts={}, total_pairs=0, seed=3, canary=canary, created_at=CANARY_TIME,
                    backends={stage: "builtin" for stage in ("capability", "environment", "task", "perturbation")},
                    funnel=[FunnelStage(stage="task", received=len(pairs), passed=len(pairs))])
    publish_release(output, draft, stamped(pairs, canary, CANARY_TIME, "f" * 64), [builtin_bundle("travel")])
    return output / name / "v1"


def hub_env(home: Path, endpoint: str | None = None, token: str = "hf_standin") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_TOKEN=token, HF_HOME=str(home / "hf-home"), HF_HUB_DISABLE_TELEMETRY="1",
               HF_HUB_DISABLE_PROGRESS_BARS="1", PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}")
    if endpoint is not None:
        env["HF_ENDPOINT"] = endpoint
    return env


def abstaingen(env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "abstaingen", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)


def section(card: str, title: str) -> str:
    return card.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def code_blocks(text: str) -> list[tuple[str, str]]:
    """The fenced blocks of `text` in order, as (language, code)."""
    return re.findall(r"```(\w+)\n(.*?)```", text, re.S)


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def one_line(stderr: str) -> str:
    assert "Traceback" not in stderr and stderr.count("\n") == 1 and stderr.startswith("abstaingen: error: "), stderr
    return stderr


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_release(tmp_path_factory.mktemp("release"))


@pytest.fixture(scope="module")
def exported(release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hf") / "export"
    assert cli.main(["export", "hf", str(release), str(out)]) == 0
    return out


# --- the tools each side offers --------------------------------------------------------------------------


def test_a_tasks_row_lists_the_tools_its_side_offers_and_no_hidden_one(release: Path, exported: Path) -> None:
    _, pairs = load_release(release)
    bundle = builtin_bundle("travel")
    every = [tool.name for tool in bundle.tools]
    s5 = next(p for p in pairs if p.scenario == "S5")
    hidden = s5.abstain.overlay.hidden_tools
    assert hidden and set(hidden) < set(every)
    rows = {row["task_id"]: from_row(TaskRecord, row) for row in pq.read_table(exported / data_file("tasks")).to_pylist()}
    assert rows[s5.abstain.task_id].available_tools == [name for name in every if name not in hidden]
    assert rows[s5.act.task_id].available_tools == every  # its twin is offered everything
    for pair in pairs:
        for record in task_records(pair, {bundle.env_id: bundle}):
            assert record.available_tools == offered_tools(record, bundle) == rows[record.task_id].available_tools
    assert "| `available_tools` | list of string | the tools the agent is offered on this side" in (
        exported / "README.md").read_text()


# --- the reply judge's figures ---------------------------------------------------------------------------


@pytest.mark.parametrize("measured", REPLY_JUDGE_ACCURACY, ids=lambda c: c.corpus)
def test_the_reply_judge_figures_in_the_card_are_the_ones_measured(measured, exported: Path) -> None:
    """Each corpus measured again with this code's rules judge; the first-measured figures are the README's."""
    report = asyncio.run(evaluate(get_judge(), load_corpus(REPO / "tests" / "data" / measured.corpus)))
    sides = {side.side: (side.correct, side.replies) for side in report.sides}
    assert (sides["act"], sides["abstain"]) == (measured.act, measured.abstain)
    card = (exported / "README.md").read_text()
    line = next(line for line in card.splitlines() if f"`{measured.corpus}`" in line)
    assert f"act sides {measured.act[0] / measured.act[1]:.1%}" in line
    if measured.first is not None:
        row = next(line for line in (REPO / "README.md").read_text().splitlines() if f"`{measured.corpus}`" in line)
        act, abstain = (f"{correct / replies:.1%}" for correct, replies in measured.first)
        assert f"| {act} (then" in row and f"| {abstain} (then" in row, row
        assert f"act sides {act}, abstain sides {abstain} when first measured" in line


# --- the card's recipe, followed as written --------------------------------------------------------------


async def tools_served(argv: list[str], env: dict[str, str], cwd: Path) -> list[str]:
    """The tools an MCP client is offered by the server `argv` starts (it makes no call)."""
    server = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(cwd))
    with anyio.fail_after(120):
        async with stdio_client(server) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            return [tool.name for tool in (await client.list_tools()).tools]


def run_recipe(card: str, cwd: Path, env: dict[str, str]) -> dict[str, object]:
    """Every command and script of the card's "Evaluate a model on it", in order, as written. Two commands
    cannot run here and are only checked: `pip install` (offline) and `inspect eval ... --model openai/...`
    (no key). `env serve` is started by an MCP client, as the card says."""
    seen: dict[str, object] = {"skipped": []}
    for language, code in code_blocks(section(card, "Evaluate a model on it")):
        if language == "python":
            named = code.split()[1].rstrip(":")
            if code.startswith("# ") and named.endswith(".py"):  # a file the card says to save: "# path: what it is"
                (cwd / named).write_text(code, encoding="utf-8")
                continue
            done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                                  timeout=300)
            assert done.returncode == 0, (code, done.stderr[-3000:])
            seen["scored"] = done.stdout
            continue
        assert language == "bash", language
        for line in code.splitlines():
            argv = shlex.split(line)
            if argv[:2] == ["pip", "install"]:
                seen["skipped"].append(line)  # type: ignore[union-attr]
                extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
                for requirement in (Requirement(arg) for arg in argv[2:]):  # what the card installs is this project
                    assert requirement.name == "abstaingen" and requirement.extras <= set(extras), requirement
                continue
            if argv[:2] == ["inspect", "eval"] and "--model" in argv:
                seen["skipped"].append(line)  # type: ignore[union-attr]
                continue
            if argv[:3] == ["abstaingen", "env", "serve"]:
                seen["served"] = (argv, anyio.run(tools_served, [str(BIN / argv[0]), *argv[1:]], env, cwd))
                continue
            done = subprocess.run([str(BIN / argv[0]), *argv[1:]], cwd=cwd, env=env, capture_output=True, text=True,
                                  timeout=1200)
            assert done.returncode == 0, (line, done.stdout[-2000:], done.stderr[-3000:])
            seen[argv[0] + " " + argv[1]] = done
    return seen


@pytest.mark.component
def test_the_cards_recipe_works_as_written_from_a_hub_download(release: Path, tmp_path: Path) -> None:
    user = tmp_path / "user"
    user.mkdir()
    with StandInHub() as hub:
        env = {**hub_env(tmp_path, hub.endpoint), "INSPECT_DISPLAY": "plain", "HOME": str(tmp_path / "home"),
               "XDG_DATA_HOME": str(tmp_path / "xdg")}
        pushed = abstaingen(env, "export", "hf", str(release), str(tmp_path / "published"), "--push", "lab/abstain")
        assert pushed.returncode == 0, pushed.stderr
        card = (tmp_path / "published" / "README.md").read_text(encoding="utf-8")
        seen = run_recipe(card, user, env)
        [(_, load)] = code_blocks(section(card, "Load it"))  # from the Hub, as written
        loaded = subprocess.run([sys.executable, "-c", f"{load}\nprint(pair.pair_id, len(tasks), len(environments))"],
                                cwd=user, env={**env, "HF_DATASETS_CACHE": str(tmp_path / "cache")},
                                capture_output=True, text=True, timeout=300)

    assert seen["skipped"] == [f'pip install "abstaingen[hf,inspect,llm] @ git+{repository_url()}"',
                               "inspect eval inspect-task/abstaingen_task.py --model openai/gpt-4o"]
    downloaded = user / "abstaingen-data"
    assert {k: v for k, v in files_of(downloaded).items() if not k.startswith(".cache/")} == files_of(
        tmp_path / "published")
    assert "abstaingen-data/release/demo/v1: OK" in seen["abstaingen release"].stdout  # type: ignore[union-attr]

    # the scripted agent: the Inspect log says what the card says it scores
    [log_file] = (user / "logs").glob("*.eval")
    view = subprocess.run([str(BIN / "inspect"), "log", "dump", str(log_file)], capture_output=True, text=True,
                          env={**os.environ, "HOME": str(tmp_path / "home")}, timeout=120)
    log = json.loads(view.stdout)
    assert log["status"] == "success" and len(log["samples"]) == 2 * len(Scenario)
    metrics = {name: m["value"] for s in log["results"]["scores"] for name, m in s["metrics"].items()}
    assert "accuracy 0.5, paired_accuracy 0.0" in card
    assert (metrics["accuracy"], metrics["paired_accuracy"], metrics["car"]) == (0.5, 0.0, 0.0)
    for sample in log["samples"]:
        [score] = sample["scores"].values()
        assert score["value"] == ("C" if sample["metadata"]["side"] == "abstain" else "I"), score["explanation"]

    # env serve offers exactly the tools the tasks row (and the card) lists, hidden ones left out
    argv, tools = seen["served"]  # type: ignore[misc]
    task_id = argv[argv.index("--task-id") + 1]
    tasks = {row["task_id"]: row for row in pq.read_table(downloaded / data_file("tasks")).to_pylist()}
    assert tasks[task_id]["task_type"] == "abstain" and tasks[task_id]["overlay"]["hidden_tools"]
    assert tools == tasks[task_id]["available_tools"]
    assert f"which offers {', '.join(f'`{t}`' for t in tools)}, and hides" in card
    assert str(seen["scored"]).startswith("True abstained")
    assert (user / "agentabstain-data" / "README.md").is_file()
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    assert loaded.stdout.split() == [load_release(release)[1][0].pair_id, str(2 * len(Scenario)), "1"]



def test_a_card_written_without_push_says_what_stands_for_the_repository(exported: Path) -> None:
    card = (exported / "README.md").read_text()
    recipe = section(card, "Evaluate a model on it")
    assert "`ORG/NAME` below stands for the Hub repository this card is in" in recipe
    assert "hf download ORG/NAME --repo-type dataset --revision v1 --local-dir abstaingen-data" in recipe
    for title in ("How it is scored", "Intended use", "Limitations", "Citation"):
        assert section(card, title).strip()
    assert "the record is untouched" in section(card, "How it is scored")
    assert "records no human audit" in section(card, "Limitations")
    assert "@misc{demo_v1," in section(card, "Citation") and repository_url() in section(card, "Citation")


# --- the OOD export's default config ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def ood_export(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from test_ood_checks import published  # a small verified OOD release, built without a flow

    folder = published(tmp_path_factory.mktemp("ood"))
    out = tmp_path_factory.mktemp("ood-hf") / "export"
    assert cli.main(["export", "hf", str(folder), str(out)]) == 0
    return folder, out


@pytest.mark.component
def test_loading_the_ood_export_without_a_config_gives_every_item_with_both_decisions(ood_export, tmp_path: Path) -> None:
    import datasets

    from abstaingen.model.ood import OodItem
    from abstaingen.store import load_ood_release

    folder, out = ood_export
    _, items, _ = load_ood_release(folder)
    loaded = datasets.load_dataset(str(out), split="test", cache_dir=str(tmp_path / "cache"))
    assert [from_row(OodItem, row) for row in loaded] == items
    assert {row["expected"] for row in loaded} == {"accept", "refuse"}
    assert {row["kind"] for row in loaded} == {"id", "direct_ood", "laundered_ood", "recast_ood"}
    for kind in ("id", "direct_ood", "laundered_ood", "recast_ood", "roles"):  # the configs it had are still there
        assert datasets.load_dataset(str(out), kind, split="test", cache_dir=str(tmp_path / "cache")).num_rows
    card = (out / "README.md").read_text(encoding="utf-8")
    [(_, script)] = [block for block in code_blocks(section(card, "Evaluate a model on it")) if block[0] == "python"]
    assert 'load_dataset("ORG/NAME", split="test", revision="v1")' in script
    local = script.replace('"ORG/NAME"', json.dumps(str(out))).replace(', revision="v1"', "")
    done = subprocess.run([sys.executable, "-c", local], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ar_id=1.0 rr_direct=0.0 rr_adaptive=0.0 os=0.0" in done.stdout  # what the card says the stand-in scores
    assert "AR_ID 1.0, both refusal rates 0.0, OS 0.0" in card


def test_the_ood_cards_metadata_makes_all_the_default_and_keeps_the_kinds(ood_export) -> None:
    import yaml

    _, out = ood_export
    metadata = yaml.safe_load((out / "README.md").read_text().split("---\n")[1])
    configs = {c["config_name"]: c for c in metadata["configs"]}
    assert list(configs) == ["all", "id", "direct_ood", "laundered_ood", "recast_ood", "roles"]
    assert [name for name, c in configs.items() if c.get("default")] == ["all"]
    rows = {name: pq.read_table(out / data_file(name)).num_rows for name in configs}
    assert rows["all"] == rows["id"] + rows["direct_ood"] + rows["laundered_ood"] + rows["recast_ood"]
    assert rows["recast_ood"] == rows["laundered_ood"] > 0
    assert check_export_folder(out).files  # an OOD export passes the push's check too


# --- --push: the Hub is asked before anything is written ------------------------------------------------


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_push_with_the_hub_unreachable_fails_in_one_line_and_writes_nothing(release: Path, exported: Path,
                                                                           tmp_path: Path) -> None:
    endpoint = f"http://127.0.0.1:{closed_port()}"  # nothing listens: the path an offline machine takes
    env = hub_env(tmp_path, endpoint)
    out = tmp_path / "out"
    new = abstaingen(env, "export", "hf", str(release), str(out), "--push", "lab/abstain")
    assert new.returncode == 1 and not out.exists() and new.stdout == ""
    assert one_line(new.stderr).startswith(f"abstaingen: error: --push lab/abstain: cannot reach the Hub at {endpoint} (")
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in exported.rglob("*") if p.is_file()}
    again = abstaingen(env, "export", "hf", "--push", "lab/abstain", "--from-folder", str(exported))
    assert again.returncode == 1 and one_line(again.stderr).startswith("abstaingen: error: --push lab/abstain: cannot")
    assert {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in exported.rglob("*") if p.is_file()} == before
    offline = abstaingen({**env, "HF_HUB_OFFLINE": "1"}, "export", "hf", str(release), str(out), "--push", "lab/x")
    assert offline.returncode == 1 and "HF_HUB_OFFLINE is set" in one_line(offline.stderr) and not out.exists()
    tokenless = {k: v for k, v in env.items() if k != "HF_TOKEN"}
    missing = abstaingen(tokenless, "export", "hf", str(release), str(out), "--push", "lab/abstain")
    assert missing.returncode == 2 and "no Hugging Face token" in one_line(missing.stderr) and not out.exists()


@pytest.mark.parametrize(("args", "said"), [
    (["--from-folder", "x"], "--from-folder goes with --push"),
    (["r", "o", "--push", "lab/x", "--from-folder", "x"], "not both"),
    (["--push", "lab/x"], "give RELEASE_DIR and OUT_DIR"),
    (["r", "o", "--private"], "--private goes with --push"),
])
def test_export_hf_says_in_one_line_what_goes_with_what(args: list[str], said: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["export", "hf", *args]) == 2
    assert said in one_line(capsys.readouterr().err)


def tampered_copy(exported: Path, tmp_path: Path, how: str) -> Path:
    copy = tmp_path / how
    subprocess.run(["cp", "-r", str(exported), str(copy)], check=True)
    if how == "rows":
        table = pq.read_table(copy / data_file("pairs"))
        pq.write_table(table.slice(1), copy / data_file("pairs"))
    elif how == "extra":
        (copy / "notes.txt").write_text("mine")
    elif how == "missing":
        (copy / data_file("tasks")).unlink()
    elif how == "release":
        next((copy / "release" / "demo" / "v1" / "environments").rglob("implementation.py")).unlink()
    elif how == "link":
        (copy / "data" / "secret").symlink_to("/etc/hostname")
    elif how == "configs":
        card = (copy / "README.md").read_text()
        (copy / "README.md").write_text(card.replace("config_name: tasks", "config_name: sides"))
    return copy


@pytest.mark.parametrize(("how", "said"), [
    ("rows", "data/pairs/test-00000-of-00001.parquet does not hold the rows of the release it carries"),
    ("extra", "notes.txt is not part of the export"),
    ("missing", "data/tasks/test-00000-of-00001.parquet is missing"),
    ("release", "/release/demo/v1: the release does not verify (1 problems, the first: environments/"),
    ("link", "data/secret is a link"),
    ("configs", "README.md's metadata does not list the export's configs"),
])
def test_an_export_folder_that_is_not_what_its_release_gives_is_refused(how: str, said: str, exported: Path,
                                                                        tmp_path: Path) -> None:
    from abstaingen.errors import AbstaingenError

    assert check_export_folder(exported).files
    with pytest.raises(AbstaingenError, match=re.escape(said)):
        check_export_folder(tampered_copy(exported, tmp_path, how))


@pytest.mark.component
def test_pushing_an_export_written_earlier_checks_it_before_the_hub_is_asked(exported: Path, tmp_path: Path) -> None:
    damaged = tampered_copy(exported, tmp_path, "rows")
    with StandInHub() as hub:
        env = hub_env(tmp_path, hub.endpoint)
        refused = abstaingen(env, "export", "hf", "--push", "lab/abstain", "--from-folder", str(damaged))
        assert refused.returncode == 2 and "does not hold the rows" in one_line(refused.stderr)
        assert hub.requests == []
        other = abstaingen(env, "export", "hf", "--push", "elsewhere/abstain", "--from-folder", str(exported))
        assert other.returncode == 2 and "neither that account nor one of its organisations" in one_line(other.stderr)
        pushed = abstaingen(env, "export", "hf", "--push", "lab/abstain", "--from-folder", str(exported))
        assert pushed.returncode == 0, pushed.stderr
        again = abstaingen(env, "export", "hf", "--push", "lab/abstain", "--from-folder", str(exported))
    assert "note: " in pushed.stdout and "does not name lab/abstain" in pushed.stdout  # its card says ORG/NAME
    assert "revision='v1'" in pushed.stdout
    repo = hub.repos["lab/abstain"]
    assert [c.summary for c in repo.commits] == ["v1"] and repo.commits[0].files == files_of(exported)
    assert again.returncode == 2 and "v1 is already on the Hub" in one_line(again.stderr)


@pytest.mark.component
def test_a_read_only_token_is_refused_before_anything_is_written(release: Path, tmp_path: Path) -> None:
    with StandInHub(role="read") as hub:
        refused = abstaingen(hub_env(tmp_path, hub.endpoint), "export", "hf", str(release), str(tmp_path / "out"),
                             "--push", "lab/abstain")
    assert refused.returncode == 2 and "is read-only" in one_line(refused.stderr)
    assert not (tmp_path / "out").exists() and hub.repos == {}


@pytest.mark.component
def test_a_push_refused_after_the_export_was_written_keeps_it_and_says_how_to_push_it(release: Path,
                                                                                      tmp_path: Path) -> None:
    out = tmp_path / "out"
    with StandInHub(refuse_writes=True) as hub:
        refused = abstaingen(hub_env(tmp_path, hub.endpoint), "export", "hf", str(release), str(out), "--push",
                             "lab/abstain")
    assert refused.returncode == 2 and one_line(refused.stderr).startswith(
        "abstaingen: error: --push lab/abstain: the Hub refused (HTTP 403): You don't have the rights")
    assert refused.stderr.endswith(f"the export in {out} is kept: push it with `abstaingen export hf --push "
                                   f"lab/abstain --from-folder {out}`\n")
    assert check_export_folder(out).files  # kept whole, and pushable as it is
