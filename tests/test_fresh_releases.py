"""A new release of a dataset never repeats an earlier one: near-duplicate pairs and pairs about an
already published target record are dropped and counted; every record carries the dataset's canary."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from builtin_fixtures import builtin_bundle, builtin_pair

from abstaingen.config import DecontaminationConfig, HfTextSource, load_config
from abstaingen.diff import diff_releases, render
from abstaingen.errors import AbstaingenError
from abstaingen.flows import cli
from abstaingen.model import FunnelStage, Release, Scenario, TaskPair
from abstaingen.pipelines.pairs import deduplicate, stamped
from abstaingen.pipelines.verify import verify_release
from abstaingen.store import counts_for, dataset_canary, publish_release
from abstaingen.validators.decontaminate import load_references, records_in_file
from abstaingen.validators.dedup import EarlierReleases, earlier_releases, pair_text, target_key

DOMAINS = ("travel", "banking")


def pairs_of(seed: int) -> list[TaskPair]:
    return [builtin_pair(s, v, d, seed) for d in DOMAINS for s in Scenario for v in (0, 1)]


def bundles_of(seed: int):
    return [builtin_bundle(d, seed) for d in DOMAINS]


def by_env(pairs: list[TaskPair], seed: int) -> list[list[TaskPair]]:
    return [[p for p in pairs if p.act.env_id == b.env_id] for b in bundles_of(seed)]


def publish(output: Path, pairs: list[TaskPair], seed: int, canary: str = "") -> Release:
    draft = Release(name="demo", version="", created_by="test", config_fingerprint="f" * 64, sandbox="local",
                    counts={}, total_pairs=0, seed=seed, canary=canary,
                    funnel=[FunnelStage(stage="task", received=len(pairs), passed=len(pairs))])
    return publish_release(output, draft, stamped(pairs, canary, "2026-12-01T00:00:00+00:00", "f" * 64),
                           bundles_of(seed))


def test_the_same_pairs_again_are_all_dropped_as_seen_in_an_earlier_release(tmp_path: Path) -> None:
    publish(tmp_path, pairs_of(11), 11)
    earlier = earlier_releases(tmp_path / "demo")
    assert earlier.versions == ["v1"] and len(earlier.texts) == len(pairs_of(11))
    again = deduplicate(bundles_of(11), by_env(pairs_of(11), 11), earlier)
    assert again.funnel.rejected == {"seen_in_earlier_release": len(pairs_of(11))}
    assert not any(again.by_environment)


def test_a_fresh_seed_repeats_nothing_and_keeps_what_is_new(tmp_path: Path) -> None:
    publish(tmp_path, pairs_of(11), 11)
    fresh = deduplicate(bundles_of(12), by_env(pairs_of(12), 12), earlier_releases(tmp_path / "demo"))
    within = deduplicate(bundles_of(12), by_env(pairs_of(12), 12))
    assert fresh.funnel.rejected == within.funnel.rejected  # nothing more than within the release itself
    assert sum(map(len, fresh.by_environment)) > 0.9 * len(pairs_of(12))


def test_a_pair_about_an_already_published_target_record_is_dropped() -> None:
    pair = builtin_pair(Scenario.S4, 0, "banking", 12)
    key = target_key(pair, builtin_bundle("banking", 12))
    assert key is not None and key.startswith("banking/")
    earlier = EarlierReleases(versions=["v1"], texts=["something else entirely"], targets=[key])
    outcome = deduplicate([builtin_bundle("banking", 12)], [[pair]], earlier)
    assert outcome.funnel.rejected == {"same_target_as_earlier": 1}
    changed = builtin_bundle("banking", 12).model_copy(update={"initial_state": json.loads(
        json.dumps(builtin_bundle("banking", 12).initial_state).replace(pair.target.record_id, "renamed"))})
    assert target_key(pair, changed) is None  # the record is looked up, not assumed


def test_earlier_releases_text_is_the_dedup_text() -> None:
    pair = builtin_pair(Scenario.S1)
    assert pair.act.instruction in pair_text(pair) and pair.abstain.instruction in pair_text(pair)


def test_an_unreadable_earlier_release_stops_the_run_with_its_name(tmp_path: Path) -> None:
    publish(tmp_path, pairs_of(11), 11)
    (tmp_path / "demo" / "v1" / "pairs.jsonl").write_text("{not json\n", encoding="utf-8")
    with pytest.raises(AbstaingenError, match=r"earlier version v1: .*pairs.jsonl:1"):
        earlier_releases(tmp_path / "demo")


@pytest.mark.parametrize("swap", ["a link to /dev/zero", "a FIFO", "a link out of the release"])
def test_an_earlier_release_s_files_are_never_followed_or_waited_on(tmp_path: Path, swap: str) -> None:
    """A pairs.jsonl turned into a link or a FIFO stops the run with one line, at once, reading nothing."""
    import os

    publish(tmp_path, pairs_of(11), 11)
    pairs = tmp_path / "demo" / "v1" / "pairs.jsonl"
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(pairs.read_bytes())
    pairs.unlink()
    if swap == "a FIFO":
        os.mkfifo(pairs)
    else:
        pairs.symlink_to("/dev/zero" if swap == "a link to /dev/zero" else outside)
    with pytest.raises(AbstaingenError, match=r"earlier version v1: .*pairs.jsonl: is (a symbolic link|not a regular)"):
        earlier_releases(tmp_path / "demo")


def test_the_canary_is_drawn_once_per_dataset_and_carried_by_every_pair(tmp_path: Path) -> None:
    first = dataset_canary(tmp_path / "demo")
    assert "canary GUID" in first and first != dataset_canary(tmp_path / "other")
    publish(tmp_path, pairs_of(11), 11, first)
    assert dataset_canary(tmp_path / "demo") == first
    published = tmp_path / "demo" / "v1" / "pairs.jsonl"
    assert all(json.loads(line)["canary"] == first for line in published.read_text(encoding="utf-8").splitlines())
    assert verify_release(tmp_path / "demo" / "v1") == []


def test_verify_finds_pairs_without_the_canary(tmp_path: Path) -> None:
    canary = dataset_canary(tmp_path / "demo")
    draft = Release(name="demo", version="", created_by="test", config_fingerprint="f" * 64, sandbox="local",
                    counts={}, total_pairs=0, canary=canary,
                    funnel=[FunnelStage(stage="task", received=2, passed=2)])
    pairs = stamped(pairs_of(11)[:2], canary, "t", "f")
    pairs[1] = pairs[1].model_copy(update={"canary": ""})
    publish_release(tmp_path, draft, pairs, bundles_of(11))
    assert verify_release(tmp_path / "demo" / "v1") == ["pairs.jsonl: 1 pairs do not carry the manifest's canary "
                                                        "string"]


def test_diff_tells_changed_pairs_from_added_and_removed_and_names_the_settings() -> None:
    pairs = stamped(pairs_of(11)[:4], "c", "t", "f")
    release = Release(name="demo", version="v1", created_by="test", config_fingerprint="f", sandbox="local",
                      counts=counts_for(pairs), total_pairs=4, seed=11, funnel=[])
    relabelled = pairs[1].model_copy(update={"abstain": pairs[1].abstain.model_copy(update={"good_reply": "other"})})
    restamped = pairs[2].model_copy(update={"provenance": pairs[2].provenance.model_copy(update={"created_at": "u"})})
    newer = [pairs[0], relabelled, restamped, builtin_pair(Scenario.S5, 0, "banking", 12)]
    after = release.model_copy(update={"version": "v2", "seed": 12, "counts": counts_for(newer),
                                       "checked_against": ["v1"],
                                       "funnel": [FunnelStage(stage="dedup", received=5, passed=4,
                                                              rejected={"seen_in_earlier_release": 1})]})
    difference = diff_releases(release, pairs, after, newer)
    assert difference.changed == [pairs[1].pair_id]  # a new run stamp alone is not a change of the pair
    assert difference.added == [newer[3].pair_id] and difference.removed == [pairs[3].pair_id]
    assert [(c.setting, c.before, c.after) for c in difference.settings] == [("seed", "11", "12")]
    text = render(difference)
    assert "pairs: 4 -> 4 (1 added, 1 removed, 1 changed)" in text
    assert "dedup dropped: seen_in_earlier_release 1" in text


# --- decontamination against the user's texts ----------------------------------------------------


def test_a_pair_sharing_a_long_run_of_words_with_a_reference_text_is_dropped(tmp_path: Path) -> None:
    pairs = pairs_of(11)
    victim = pairs[5]
    words = re.findall(r"\w+", victim.abstain.instruction)
    assert len(words) >= 13
    quoted = " ".join(words[:13]).upper().replace(" ", "  ")  # case and spacing do not hide it
    (tmp_path / "corpus.txt").write_text(f"Some forum post. {quoted}! More text.", encoding="utf-8")
    (tmp_path / "near.txt").write_text(" ".join(words[:12]), encoding="utf-8")  # 12 words are not enough
    index = load_references(DecontaminationConfig(files=(tmp_path / "corpus.txt",)))
    assert index is not None and index.describe() == [f"13-word runs of {tmp_path / 'corpus.txt'} (1 records)"]
    outcome = deduplicate(bundles_of(11), by_env(pairs, 11), references=index)
    kept = {p.pair_id for group in outcome.by_environment for p in group}
    assert victim.pair_id not in kept and outcome.funnel.rejected["overlaps_reference_text"] >= 1
    assert len(kept) + outcome.funnel.rejected["overlaps_reference_text"] == len(pairs)
    short = load_references(DecontaminationConfig(files=(tmp_path / "near.txt",)))
    assert not any(short.overlaps(p) for p in pairs)  # type: ignore[union-attr]


def test_reference_files_give_every_string_and_bad_lines_are_named(tmp_path: Path) -> None:
    (tmp_path / "bank.jsonl").write_text('{"question": "q one", "choices": ["a", "b"]}\n\n{"question": "q two"}\n')
    assert records_in_file(tmp_path / "bank.jsonl") == [["q one", "a", "b"], ["q two"]]
    (tmp_path / "bad.jsonl").write_text('{"question": "q"}\n{oops\n')
    with pytest.raises(AbstaingenError, match=r"bad.jsonl:2: not valid JSON"):
        records_in_file(tmp_path / "bad.jsonl")
    with pytest.raises(AbstaingenError, match=r"missing.txt"):
        load_references(DecontaminationConfig(files=(tmp_path / "missing.txt",)))


def test_a_hugging_face_dataset_is_a_reference_source(tmp_path: Path) -> None:
    publish(tmp_path, pairs_of(11), 11, "canary")
    assert cli.main(["export", "hf", str(tmp_path / "demo" / "v1"), str(tmp_path / "hf")]) == 0
    index = load_references(DecontaminationConfig(hf=(HfTextSource(name=str(tmp_path / "hf"), config="tasks"),)))
    assert index is not None and index.sources == [f"Hugging Face {tmp_path / 'hf'} tasks [test] (64 records)"]
    long_enough = [p for p in pairs_of(11) if len(re.findall(r"\w+", p.act.instruction)) >= 13]
    assert long_enough and all(index.overlaps(p) for p in long_enough)  # a release is contaminated by its export
    # another seed's pairs share a 13-word run with this export only where templates repeat a long phrase
    assert sum(index.overlaps(p) for p in pairs_of(12)) <= 0.1 * len(pairs_of(12))
    with pytest.raises(AbstaingenError, match=r"cannot load the Hugging Face dataset .*no-such"):
        load_references(DecontaminationConfig(hf=(HfTextSource(name=str(tmp_path / "no-such")),)))


def test_decontamination_files_are_read_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[decontamination]\nfiles = ["refs/a.txt"]\nngram = 8\n')
    config = load_config(tmp_path / "config.toml")
    assert config.decontamination.files == (tmp_path / "refs" / "a.txt",) and config.decontamination.ngram == 8
