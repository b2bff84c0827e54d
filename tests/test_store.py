from __future__ import annotations

import datetime
import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from abstaingen import store
from abstaingen.errors import AbstaingenError, HostError
from abstaingen.model import EnvironmentBundle, FunnelStage, Release, TaskPair
from abstaingen.pipelines.verify import verify_release
from abstaingen.sandboxes.runtime_server import Environment
from abstaingen.store import counts_for, load_release, publish_release, read_bundle, read_pairs, write_bundle

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
    clock = (datetime.datetime, datetime.date, time.time, time.gmtime)
    write_bundle(tiny_bundle, tmp_path)
    env = Environment(tmp_path)
    assert env.call("cancel_booking", {"booking_id": "B1"}) == (True, {"id": "B1", "status": "cancelled"})
    assert env.state["bookings"][0]["status"] == "cancelled"
    # Only the server's own process freezes its clock: a frozen datetime class here crashed pandas' import
    # in a later test of this process.
    assert (datetime.datetime, datetime.date, time.time, time.gmtime) == clock


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


def _for(draft: Release, pairs: int) -> Release:
    """The draft with a funnel that ends in `pairs` pairs, as a real run's does (verify checks that)."""
    return draft.model_copy(update={"funnel": [FunnelStage(stage="tasks", received=pairs + 1, passed=pairs,
                                                           rejected={"replay failed": 1})]})


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
    first = publish_release(tmp_path, _for(draft_release, 1), [make_pair(1)], [tiny_bundle])
    v1_manifest = (tmp_path / "demo" / "v1" / "manifest.json").read_bytes()
    second = publish_release(tmp_path, _for(draft_release, 2), [make_pair(1), make_pair(2)], [tiny_bundle])

    assert (first.version, second.version) == ("v1", "v2")
    assert (tmp_path / "demo" / "v1" / "manifest.json").read_bytes() == v1_manifest
    assert verify_release(tmp_path / "demo" / "v1") == []
    assert verify_release(tmp_path / "demo" / "v2") == []
    assert len(load_release(tmp_path / "demo" / "v1")[1]) == 1
    assert len(load_release(tmp_path / "demo" / "v2")[1]) == 2


@contextmanager
def _umask(mask: int) -> Iterator[None]:
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


def _modes(release_dir: Path) -> dict[str, int]:
    """The permission bits of the release folder ("."), and of every folder and file in it."""
    return {str(path.relative_to(release_dir)): stat.S_IMODE(path.stat().st_mode)
            for path in [release_dir, *release_dir.rglob("*")]}


def test_a_published_release_is_readable_by_others_under_umask_022(
    tmp_path: Path, draft_release: Release, tiny_bundle: EnvironmentBundle, make_pair: PairFactory
) -> None:
    with _umask(0o022):
        publish_release(tmp_path, draft_release, [make_pair(1)], [tiny_bundle])
    modes = _modes(tmp_path / "demo" / "v1")
    folders = {".", "environments", "environments/travel-tiny"}
    assert set(modes) == folders | {"pairs.jsonl", "manifest.json", "environments/travel-tiny/environment.json",
                                    "environments/travel-tiny/implementation.py"}
    assert {name: oct(mode) for name, mode in modes.items()} == {
        name: oct(0o755 if name in folders else 0o644) for name in modes}


def test_a_published_release_stays_private_under_umask_077(
    tmp_path: Path, draft_release: Release, tiny_bundle: EnvironmentBundle, make_pair: PairFactory
) -> None:
    with _umask(0o077):
        publish_release(tmp_path, draft_release, [make_pair(1)], [tiny_bundle])
    modes = _modes(tmp_path / "demo" / "v1")
    assert len(modes) == 7
    assert {name: oct(mode & 0o077) for name, mode in modes.items() if mode & 0o077} == {}
    assert modes["."] == 0o700 and modes["pairs.jsonl"] == 0o600  # the owner still reads (and writes) it


@pytest.mark.parametrize("proc_readable", [True, False], ids=["from /proc", "set and restored"])
def test_the_umask_is_read_without_being_changed(monkeypatch: pytest.MonkeyPatch, proc_readable: bool) -> None:
    if not proc_readable:  # as on a system without /proc/self/status
        def no_proc(*_: object, **__: object) -> None:
            raise FileNotFoundError("/proc/self/status")

        monkeypatch.setattr(store, "open", no_proc, raising=False)
    with _umask(0o027):
        assert store.process_umask() == 0o027
        assert os.umask(0o027) == 0o027  # still in place afterwards


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
    publish_release(tmp_path, _for(draft_release, 1), [make_pair(1)], [tiny_bundle])
    squatted = tmp_path / "demo" / "v2"
    squatted.mkdir()  # empty: rename(2) would replace it silently
    monkeypatch.setattr(store, "existing_versions", lambda _: [])  # as if both appeared after the scan

    published = publish_release(tmp_path, _for(draft_release, 1), [make_pair(2)], [tiny_bundle])

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
    publish_release(tmp_path, _for(draft_release, 1), [make_pair(1)], [tiny_bundle])

    def disk_full(bundle: EnvironmentBundle, folder: Path) -> None:
        (folder / "environment.json").parent.mkdir(parents=True)
        (folder / "environment.json").write_text("{")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store, "write_bundle", disk_full)
    with pytest.raises(HostError, match=r"cannot publish \(No space left on device\)"):
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


# --- verifying: paths, links and what the manifest claims ----------------------------------------


def _edit_manifest(folder: Path, **changes: object) -> None:
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest.update(changes)
    (folder / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize("listed", ["../../outside.txt", "/ABSOLUTE", "environments/../../../outside.txt",
                                    "./pairs.jsonl", "environments//travel-tiny/environment.json", ""])
def test_verify_refuses_manifest_paths_that_leave_the_release(published: Path, listed: str) -> None:
    outside = published.parent.parent / "outside.txt"
    outside.write_text("not part of the release\n")
    path = listed.replace("/ABSOLUTE", str(outside))
    manifest = json.loads((published / "manifest.json").read_text())
    manifest["files"].append({"path": path, "sha256": _sha256(outside), "bytes": outside.stat().st_size})
    (published / "manifest.json").write_text(json.dumps(manifest))

    problems = verify_release(published)
    assert len(problems) == 1
    assert "not inside the release" in problems[0] and "it was not opened" in problems[0]


def test_verify_refuses_a_file_that_is_a_link(published: Path, tmp_path: Path) -> None:
    copy = tmp_path / "elsewhere.jsonl"
    copy.write_bytes((published / "pairs.jsonl").read_bytes())
    (published / "pairs.jsonl").unlink()
    (published / "pairs.jsonl").symlink_to(copy)  # same bytes: only the link gives it away
    assert verify_release(published) == ["pairs.jsonl: is a symbolic link; a release holds only regular files"]


def test_verify_refuses_a_folder_that_is_a_link(published: Path, tmp_path: Path) -> None:
    environments = published / "environments"
    environments.rename(tmp_path / "moved")
    environments.symlink_to(tmp_path / "moved", target_is_directory=True)
    assert verify_release(published) == ["environments: is a symbolic link; a release holds only regular files"]


def test_verify_refuses_a_manifest_that_is_a_link(published: Path, tmp_path: Path) -> None:
    (published / "manifest.json").rename(tmp_path / "manifest.json")
    (published / "manifest.json").symlink_to(tmp_path / "manifest.json")
    assert verify_release(published) == ["manifest.json: is a symbolic link; a release holds only regular files"]


def test_verify_reports_a_fifo_without_opening_it(published: Path) -> None:
    os.mkfifo(published / "environments" / "pipe")  # opening it for reading would block forever
    assert verify_release(published) == ["environments/pipe: is not a regular file"]


def test_verify_reports_an_entry_listed_twice(published: Path) -> None:
    manifest = json.loads((published / "manifest.json").read_text())
    manifest["files"].append(manifest["files"][0])
    (published / "manifest.json").write_text(json.dumps(manifest))
    assert verify_release(published) == [f"{manifest['files'][0]['path']}: listed twice in the manifest"]


def test_verify_shows_an_odd_file_name_on_one_line(published: Path) -> None:
    (published / "evil\nname").write_text("x")
    [problem] = verify_release(published)
    assert "\n" not in problem and problem.endswith("not listed in the manifest")


def test_verify_reports_a_deeply_nested_manifest(published: Path) -> None:
    (published / "manifest.json").write_text("[" * 100_000)
    [problem] = verify_release(published)
    assert problem.endswith("manifest.json: JSON nested too deeply")


def test_verify_reports_a_funnel_that_does_not_end_in_the_release(published: Path) -> None:
    _edit_manifest(published, funnel=[{"stage": "tasks", "received": 4, "passed": 3, "rejected": {"x": 1}}])
    assert verify_release(published) == ["manifest.json: the funnel's last stage passed 3 pairs, pairs.jsonl holds 2"]


def test_verify_reports_a_funnel_stage_that_does_not_add_up(published: Path) -> None:
    _edit_manifest(published, funnel=[{"stage": "tasks", "received": 9, "passed": 2, "rejected": {"x": 1}}])
    assert verify_release(published) == [
        "manifest.json: funnel stage 'tasks' received 9 and rejected 1, but says 2 passed"]


def test_verify_reports_an_unsafe_dataset_name(published: Path) -> None:
    _edit_manifest(published, name="../../elsewhere")
    assert verify_release(published) == ["manifest.json: name '../../elsewhere' cannot be a dataset folder's name"]


# --- the output folder --------------------------------------------------------------------------


def test_require_writable_dir_creates_the_folder_and_leaves_nothing_in_it(tmp_path: Path) -> None:
    store.require_writable_dir(tmp_path / "a" / "b")
    assert list((tmp_path / "a" / "b").iterdir()) == []


def test_require_writable_dir_refuses_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("keep me")
    with pytest.raises(AbstaingenError, match=r"file: cannot be used as a folder: .*file is a file"):
        store.require_writable_dir(tmp_path / "file")
    with pytest.raises(AbstaingenError, match=r"sub: cannot create this folder: .*file is a file"):
        store.require_writable_dir(tmp_path / "file" / "sub")
    assert (tmp_path / "file").read_text() == "keep me"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through any permission bits")
def test_require_writable_dir_refuses_a_read_only_folder(tmp_path: Path) -> None:
    (tmp_path / "ro").mkdir(mode=0o555)
    with pytest.raises(AbstaingenError, match="cannot write in this folder"):
        store.require_writable_dir(tmp_path / "ro")


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")
def test_require_writable_dir_refuses_a_place_nothing_can_be_created(tmp_path: Path) -> None:
    with pytest.raises(AbstaingenError, match="/proc/abstaingen-test: cannot create this folder"):
        store.require_writable_dir(Path("/proc/abstaingen-test"))
