from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from abstaingen import store
from abstaingen.errors import AbstaingenError
from abstaingen.model import EnvironmentBundle, FunnelStage, Release, TaskPair
from abstaingen.sandboxes.runtime_server import Environment
from abstaingen.store import (
    counts_for,
    load_release,
    publish_release,
    read_bundle,
    read_pairs,
    verify_release,
    write_bundle,
)

PairFactory = Callable[..., TaskPair]


@pytest.fixture
def draft_release() -> Release:
    return Release(
        name="demo",
        version="",
        created_by="abstaingen test",
        config_fingerprint="f" * 64,
        sandbox="local",
        counts={},
        total_pairs=0,
        funnel=[FunnelStage(stage="tasks", received=3, passed=2, rejected={"replay failed": 1})],
    )


# --- bundles -------------------------------------------------------------------------------------


def test_bundle_round_trip(tmp_path: Path, tiny_bundle: EnvironmentBundle) -> None:
    write_bundle(tiny_bundle, tmp_path / "env")
    assert read_bundle(tmp_path / "env") == tiny_bundle
    assert (tmp_path / "env" / "implementation.py").read_bytes() == tiny_bundle.implementation.encode()


def test_environment_json_is_pretty_sorted_and_without_source(tmp_path: Path, tiny_bundle: EnvironmentBundle) -> None:
    write_bundle(tiny_bundle, tmp_path)
    text = (tmp_path / "environment.json").read_text(encoding="utf-8")
    spec = json.loads(text)
    assert "implementation" not in spec
    assert list(spec) == sorted(spec)
    assert text.startswith("{\n  ")
    assert "Zürich" in text  # not \u-escaped


def test_runtime_serves_a_written_bundle(tmp_path: Path, tiny_bundle: EnvironmentBundle) -> None:
    write_bundle(tiny_bundle, tmp_path)
    env = Environment(tmp_path)
    assert env.call("cancel_booking", {"booking_id": "B1"}) == (True, {"id": "B1", "status": "cancelled"})
    assert env.state["bookings"][0]["status"] == "cancelled"


def test_read_bundle_rejects_a_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(AbstaingenError, match="not a bundle folder"):
        read_bundle(tmp_path / "absent")


def test_read_bundle_rejects_a_missing_implementation(tmp_path: Path, tiny_bundle: EnvironmentBundle) -> None:
    write_bundle(tiny_bundle, tmp_path)
    (tmp_path / "implementation.py").unlink()
    with pytest.raises(AbstaingenError, match=r"implementation\.py is missing"):
        read_bundle(tmp_path)


def test_read_bundle_rejects_bad_json(tmp_path: Path, tiny_bundle: EnvironmentBundle) -> None:
    write_bundle(tiny_bundle, tmp_path)
    (tmp_path / "environment.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(AbstaingenError, match=r"environment\.json:1:2: not valid JSON"):
        read_bundle(tmp_path)


def test_read_bundle_rejects_an_invalid_environment(tmp_path: Path, tiny_bundle: EnvironmentBundle) -> None:
    write_bundle(tiny_bundle, tmp_path)
    spec = json.loads((tmp_path / "environment.json").read_text())
    spec["tools"] = []
    (tmp_path / "environment.json").write_text(json.dumps(spec))
    with pytest.raises(AbstaingenError, match="invalid environment: tools"):
        read_bundle(tmp_path)


def test_write_bundle_refuses_an_env_id_that_escapes(tmp_path: Path, tiny_bundle: EnvironmentBundle) -> None:
    escaping = tiny_bundle.model_copy(update={"env_id": "../x"})
    with pytest.raises(ValueError, match="folder name"):
        publish_release(tmp_path, _release("demo"), [], [escaping])
    assert not (tmp_path / "demo").exists()


# --- counts --------------------------------------------------------------------------------------


def test_counts_for(make_pair: PairFactory) -> None:
    pairs = [make_pair(1), make_pair(2), make_pair(3, domain="banking")]
    assert counts_for(pairs) == {
        "scenario": {"S5": 3},
        "domain": {"banking": 1, "travel": 2},
        "phase": {"pre_execution": 3},
        "deliverable": {"op": 3},
    }
    assert counts_for([]) == {"scenario": {}, "domain": {}, "phase": {}, "deliverable": {}}


# --- publishing ----------------------------------------------------------------------------------


def _release(name: str) -> Release:
    return Release(
        name=name, version="", created_by="t", config_fingerprint="0" * 64, sandbox="local",
        counts={}, total_pairs=0, funnel=[],
    )


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_publish_writes_the_layout_and_a_true_manifest(
    tmp_path: Path, draft_release: Release, tiny_bundle: EnvironmentBundle, make_pair: PairFactory
) -> None:
    pairs = [make_pair(1), make_pair(2)]
    published = publish_release(tmp_path, draft_release, pairs, [tiny_bundle])

    folder = tmp_path / "demo" / "v1"
    assert published.version == "v1"
    assert published.total_pairs == 2
    assert published.counts == counts_for(pairs)
    assert published.funnel == draft_release.funnel
    assert [f.path for f in published.files] == [
        "environments/travel-tiny/environment.json",
        "environments/travel-tiny/implementation.py",
        "pairs.jsonl",
    ]
    for entry in published.files:
        assert entry.sha256 == _sha256(folder / entry.path)
        assert entry.bytes == (folder / entry.path).stat().st_size
    assert Release.model_validate_json((folder / "manifest.json").read_text()) == published
    assert load_release(folder) == (published, pairs)
    assert read_bundle(folder / "environments" / "travel-tiny") == tiny_bundle
    assert verify_release(folder) == []
    assert [p.name for p in (tmp_path / "demo").iterdir()] == ["v1"]  # no staging folder left


def test_publishing_twice_gives_two_intact_versions(
    tmp_path: Path, draft_release: Release, tiny_bundle: EnvironmentBundle, make_pair: PairFactory
) -> None:
    first = publish_release(tmp_path, draft_release, [make_pair(1)], [tiny_bundle])
    v1_manifest = (tmp_path / "demo" / "v1" / "manifest.json").read_bytes()
    second = publish_release(tmp_path, draft_release, [make_pair(1), make_pair(2)], [tiny_bundle])

    assert (first.version, second.version) == ("v1", "v2")
    assert (tmp_path / "demo" / "v1" / "manifest.json").read_bytes() == v1_manifest
    assert verify_release(tmp_path / "demo" / "v1") == []
    assert verify_release(tmp_path / "demo" / "v2") == []
    assert len(load_release(tmp_path / "demo" / "v1")[1]) == 1
    assert len(load_release(tmp_path / "demo" / "v2")[1]) == 2


def test_next_version_follows_the_highest(
    tmp_path: Path, draft_release: Release, tiny_bundle: EnvironmentBundle, make_pair: PairFactory
) -> None:
    for existing in ("v1", "v5", "notes", "v0"):
        (tmp_path / "demo" / existing).mkdir(parents=True)
    assert publish_release(tmp_path, draft_release, [make_pair()], [tiny_bundle]).version == "v6"


def test_a_version_that_appeared_meanwhile_is_skipped(
    tmp_path: Path,
    draft_release: Release,
    tiny_bundle: EnvironmentBundle,
    make_pair: PairFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    publish_release(tmp_path, draft_release, [make_pair(1)], [tiny_bundle])
    squatted = tmp_path / "demo" / "v2"
    squatted.mkdir()  # empty: rename(2) would replace it silently
    monkeypatch.setattr(store, "existing_versions", lambda _: [])  # as if both appeared after the scan

    published = publish_release(tmp_path, draft_release, [make_pair(2)], [tiny_bundle])

    assert published.version == "v3"
    assert verify_release(tmp_path / "demo" / "v1") == []
    assert list(squatted.iterdir()) == []
    assert verify_release(tmp_path / "demo" / "v3") == []


def test_failure_while_publishing_leaves_nothing_behind(
    tmp_path: Path,
    draft_release: Release,
    tiny_bundle: EnvironmentBundle,
    make_pair: PairFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    publish_release(tmp_path, draft_release, [make_pair(1)], [tiny_bundle])

    def disk_full(bundle: EnvironmentBundle, folder: Path) -> None:
        (folder / "environment.json").parent.mkdir(parents=True)
        (folder / "environment.json").write_text("{")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store, "write_bundle", disk_full)
    with pytest.raises(OSError, match="No space"):
        publish_release(tmp_path, draft_release, [make_pair(2)], [tiny_bundle])

    assert sorted(p.name for p in (tmp_path / "demo").iterdir()) == ["v1"]
    assert verify_release(tmp_path / "demo" / "v1") == []


def test_pairs_need_their_environments(
    tmp_path: Path, draft_release: Release, tiny_bundle: EnvironmentBundle, make_pair: PairFactory
) -> None:
    with pytest.raises(ValueError, match="elsewhere"):
        publish_release(tmp_path, draft_release, [make_pair(env_id="elsewhere")], [tiny_bundle])
    assert not (tmp_path / "demo").exists()


# --- verifying -----------------------------------------------------------------------------------


@pytest.fixture
def published(
    tmp_path: Path, draft_release: Release, tiny_bundle: EnvironmentBundle, make_pair: PairFactory
) -> Path:
    publish_release(tmp_path, draft_release, [make_pair(1), make_pair(2)], [tiny_bundle])
    return tmp_path / "demo" / "v1"


def test_verify_detects_a_tampered_file(published: Path) -> None:
    implementation = published / "environments" / "travel-tiny" / "implementation.py"
    implementation.write_text(implementation.read_text().replace("cancelled", "CANCELLED"))
    problems = verify_release(published)
    assert len(problems) == 1
    assert problems[0].startswith("environments/travel-tiny/implementation.py: sha256")


def test_verify_detects_a_missing_file(published: Path) -> None:
    (published / "pairs.jsonl").unlink()
    assert verify_release(published) == ["pairs.jsonl: missing"]


def test_verify_detects_an_unlisted_file(published: Path) -> None:
    (published / "environments" / "extra.json").write_text("{}")
    assert verify_release(published) == ["environments/extra.json: not listed in the manifest"]


def test_verify_detects_a_manifest_whose_counts_lie(published: Path) -> None:
    manifest = json.loads((published / "manifest.json").read_text())
    manifest["total_pairs"] = 5
    (published / "manifest.json").write_text(json.dumps(manifest))
    assert verify_release(published) == ["pairs.jsonl: 2 pairs, the manifest says 5"]


def test_verify_reports_a_folder_that_is_not_a_release(tmp_path: Path) -> None:
    problems = verify_release(tmp_path)
    assert len(problems) == 1 and "manifest.json is missing" in problems[0]


def test_read_pairs_names_the_bad_line(tmp_path: Path, make_pair: PairFactory) -> None:
    path = tmp_path / "pairs.jsonl"
    path.write_text(make_pair(1).model_dump_json() + "\n\n" + '{"pair_id": "x"}\n', encoding="utf-8")
    with pytest.raises(AbstaingenError, match=r"pairs\.jsonl:3: invalid task pair"):
        read_pairs(path)
