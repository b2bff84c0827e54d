"""`abstaingen export hf`: a Hub folder whose every config loads with `datasets` (this environment's
major, and the oldest supported one when CI provides it) and gives back every field of every pair."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from builtin_fixtures import builtin_bundle, builtin_pair
from standin.hub import StandInHub

from abstaingen.exporters.hf import CONFIGS, EnvironmentRecord, TaskRecord, task_records
from abstaingen.flows import cli
from abstaingen.model import EnvironmentBundle, FunnelStage, Release, Scenario, TaskPair
from abstaingen.model.ood import OodItem, RolePolicy
from abstaingen.pipelines.pairs import stamped
from abstaingen.pipelines.verify import verify_release
from abstaingen.records import columns, from_row
from abstaingen.store import dataset_canary, load_release, publish_release

pytestmark = pytest.mark.component

LOADER = Path(__file__).parent / "tools" / "hf_load.py"
# CI installs the oldest supported major of `datasets` in a venv of its own and names its interpreter here.
OLD_DATASETS = os.environ.get("ABSTAINGEN_OLD_DATASETS_PYTHON")


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("release")
    canary = dataset_canary(output / "demo")
    pairs = [builtin_pair(s, v, d) for d in ("travel", "banking") for s in Scenario for v in (0, 1)]
    bundles = [builtin_bundle("travel"), builtin_bundle("banking")]
    draft = Release(name="demo", version="", created_by="test", config_fingerprint="f" * 64, sandbox="local",
                    counts={}, total_pairs=0, seed=11, canary=canary, created_at="2026-12-01T00:00:00+00:00",
                    funnel=[FunnelStage(stage="task", received=len(pairs), passed=len(pairs))])
    publish_release(output, draft, stamped(pairs, canary, "2026-12-01T00:00:00+00:00", "f" * 64), bundles)
    return output / "demo" / "v1"


@pytest.fixture(scope="module")
def exported(release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hf") / "export"
    assert cli.main(["export", "hf", str(release), str(out)]) == 0
    return out


def load_with(python: str, folder: Path, tmp_path: Path) -> dict:
    env = {**os.environ, "HF_DATASETS_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    run = subprocess.run([python, str(LOADER), str(folder), *CONFIGS], capture_output=True, text=True, env=env,
                         timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


def assert_round_trip(loaded: dict, release: Path) -> None:
    manifest, pairs = load_release(release)
    configs = loaded["configs"]
    assert [from_row(TaskPair, row) for row in configs["pairs"]["rows"]] == pairs
    bundles = {b.env_id: b for b in (builtin_bundle("banking"), builtin_bundle("travel"))}
    assert [from_row(TaskRecord, row) for row in configs["tasks"]["rows"]] == [
        t for p in pairs for t in task_records(p, bundles)]
    environments = [from_row(EnvironmentRecord, row) for row in configs["environments"]["rows"]]
    assert [EnvironmentBundle.model_validate(e.model_dump(exclude={"canary"})) for e in environments] == [
        builtin_bundle("banking"), builtin_bundle("travel")]
    for config in CONFIGS:  # the canary is in every record of every config
        assert {row["canary"] for row in configs[config]["rows"]} == {manifest.canary}


def test_every_config_loads_with_this_datasets_and_round_trips(exported: Path, release: Path, tmp_path: Path) -> None:
    loaded = load_with(sys.executable, exported, tmp_path)
    assert loaded["datasets"].split(".")[0] == "5"
    assert_round_trip(loaded, release)


@pytest.mark.skipif(OLD_DATASETS is None, reason="ABSTAINGEN_OLD_DATASETS_PYTHON is not set (.ci/run sets it)")
def test_every_config_loads_with_the_oldest_supported_datasets(exported: Path, release: Path, tmp_path: Path) -> None:
    assert OLD_DATASETS is not None
    loaded = load_with(OLD_DATASETS, exported, tmp_path)
    assert loaded["datasets"].split(".")[0] == "3"
    assert_round_trip(loaded, release)


def test_the_card_has_hub_metadata_and_what_a_user_needs(exported: Path, release: Path) -> None:
    manifest, pairs = load_release(release)
    card = (exported / "README.md").read_text(encoding="utf-8")
    _, header, body = card.split("---\n", 2)
    metadata = yaml.safe_load(header)
    assert metadata["license"] == "cc-by-4.0" and metadata["size_categories"] == ["n<1K"]
    assert [c["config_name"] for c in metadata["configs"]] == list(CONFIGS)
    for config in metadata["configs"]:
        assert all((exported / f["path"]).is_file() for f in config["data_files"])
    assert manifest.canary in body
    assert "| S4 | high-stakes action | high_stakes_action | pre_execution |" in body
    assert f"- **seed**: {manifest.seed}" in body and "## Funnel" in body and "## Baselines" in body
    assert "| `act.final_state[].equals_json` | string (JSON) | the value the field holds when the task is done |" in body
    assert json.loads((exported / "manifest.json").read_text()) == manifest.model_dump(mode="json")


def test_every_column_is_described() -> None:
    """Every column of both exports' configs: the pairs dataset's and the OOD dataset's (items and roles)."""
    for model in (TaskPair, TaskRecord, EnvironmentRecord, OodItem, RolePolicy):
        assert [c.path for c in columns(model) if not c.description] == [], model.__name__


def test_the_release_is_left_exactly_as_its_manifest_lists(exported: Path, release: Path) -> None:
    assert verify_release(release) == []
    assert not any(p.name == "data" for p in release.iterdir())


def test_an_export_never_overwrites_or_writes_into_the_release(release: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    assert cli.main(["export", "hf", str(release), str(tmp_path / "taken")]) == 2
    assert "exists and is not an empty folder" in capsys.readouterr().err
    assert (tmp_path / "taken" / "notes.txt").read_text() == "mine"
    assert cli.main(["export", "hf", str(release), str(release / "hf")]) == 2
    assert "not inside the release" in capsys.readouterr().err


def test_a_damaged_release_is_not_exported(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "demo" / "v1"
    copy.parent.mkdir()
    subprocess.run(["cp", "-r", str(release), str(copy)], check=True)
    with (copy / "pairs.jsonl").open("a") as stream:
        stream.write("\n")
    assert cli.main(["export", "hf", str(copy), str(tmp_path / "out")]) == 2
    assert "the release does not verify" in capsys.readouterr().err and not (tmp_path / "out").exists()


# --- --push, against a stand-in of the Hub's HTTP API (tests/standin/hub.py) -------------------------


def export_and_push(release: Path, out: Path, hub: StandInHub, *extra: str,
                    token: str = "hf_standin") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_ENDPOINT=hub.endpoint, HF_TOKEN=token, HF_HOME=str(out.parent / "hf-home"),
               HF_HUB_DISABLE_TELEMETRY="1")
    return subprocess.run([sys.executable, "-m", "abstaingen", "export", "hf", str(release), str(out), *extra],
                          capture_output=True, text=True, env=env, timeout=120)


def test_push_uploads_each_version_as_a_tagged_commit(release: Path, tmp_path: Path) -> None:
    newer = tmp_path / "releases"
    newer.mkdir()
    subprocess.run(["cp", "-r", str(release.parent), str(newer / "demo")], check=True)
    manifest, pairs = load_release(release)
    publish_release(newer, manifest.model_copy(update={"version": "", "funnel": [
        FunnelStage(stage="task", received=10, passed=10)]}), pairs[:10], [builtin_bundle("travel"),
                                                                           builtin_bundle("banking")])
    with StandInHub() as hub:
        first = export_and_push(release, tmp_path / "v1", hub, "--push", "lab/abstain", "--private")
        second = export_and_push(newer / "demo" / "v2", tmp_path / "v2", hub, "--push", "lab/abstain")
        again = export_and_push(release, tmp_path / "v1-again", hub, "--push", "lab/abstain")
    assert first.returncode == 0, first.stderr[-3000:]
    assert second.returncode == 0, second.stderr[-3000:]
    assert "as v1" in first.stdout and "revision='v1'" in first.stdout
    repo = hub.repos["lab/abstain"]
    assert repo.private and [c.summary for c in repo.commits] == ["v1", "v2"]
    assert repo.tags == {"v1": repo.commits[0].oid, "v2": repo.commits[1].oid}
    for version, commit in (("v1", repo.commits[0]), ("v2", repo.commits[1])):
        local = tmp_path / version
        assert commit.files == {p.relative_to(local).as_posix(): p.read_bytes() for p in local.rglob("*") if p.is_file()}
    assert again.returncode == 2 and "v1 is already on the Hub" in again.stderr and len(repo.commits) == 2


def test_push_without_a_valid_token_fails_with_one_line_before_writing(release: Path, tmp_path: Path) -> None:
    with StandInHub() as hub:
        refused = export_and_push(release, tmp_path / "out", hub, "--push", "lab/abstain", token="hf_wrong")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.startswith("abstaingen: error: --push lab/abstain: the Hub refused (HTTP 401): Invalid ")
    assert refused.stderr.count("\n") == 1 and refused.stderr.endswith("\n")
    assert not (tmp_path / "out").exists() and hub.requests == ["GET /api/whoami-v2"]  # asked first, wrote nothing
