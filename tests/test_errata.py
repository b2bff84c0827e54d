"""Errata: corrections recorded beside a release (which never changes), applied by exports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builtin_fixtures import builtin_bundle, builtin_pair

from abstaingen.errata import apply_errata, read_errata
from abstaingen.exporters import read_release_contents
from abstaingen.flows import cli
from abstaingen.model import FunnelStage, Release, Scenario
from abstaingen.pipelines.verify import verify_release
from abstaingen.store import load_release, publish_release


@pytest.fixture
def release(tmp_path: Path) -> Path:
    pairs = [builtin_pair(s, 0) for s in Scenario]
    draft = Release(name="demo", version="", created_by="test", config_fingerprint="f", sandbox="local", counts={},
                    total_pairs=0, funnel=[FunnelStage(stage="task", received=8, passed=8)])
    publish_release(tmp_path, draft, pairs, [builtin_bundle("travel")])
    return tmp_path / "demo" / "v1"


def erratum(release: Path, pair_id: str, field: str, value: str, reason: str = "checked by hand") -> int:
    return cli.main(["release", "erratum", str(release), "--pair", pair_id, "--field", field, "--value", value,
                     "--reason", reason])


def test_errata_are_kept_beside_the_release_and_exports_apply_them(release: Path, tmp_path: Path) -> None:
    _, pairs = load_release(release)
    s1, s8 = pairs[0], pairs[7]
    assert erratum(release, s1.pair_id, "abstain.good_reply", json.dumps("Ask which of the two bookings.")) == 0
    assert erratum(release, s8.pair_id, "withdrawn", "true", "the note does not restrict this action") == 0
    assert verify_release(release) == []  # the release folder is untouched
    assert [e.field for e in read_errata(release, "v1")] == ["abstain.good_reply", "withdrawn"]
    contents = read_release_contents(release)
    assert len(contents.pairs) == 7 and s8.pair_id not in {p.pair_id for p in contents.pairs}
    assert contents.pairs[0].abstain.good_reply == "Ask which of the two bookings."
    assert cli.main(["export", "hf", str(release), str(tmp_path / "hf")]) == 0
    card = (tmp_path / "hf" / "README.md").read_text(encoding="utf-8")
    assert f"`{s1.pair_id}`: `abstain.good_reply` corrected to" in card and "7 pairs (14 tasks)" in card


def test_a_later_erratum_of_the_same_field_wins(release: Path) -> None:
    _, pairs = load_release(release)
    target = pairs[2].pair_id
    assert erratum(release, target, "act.instruction", json.dumps(pairs[2].act.premise + " first")) == 0
    assert erratum(release, target, "act.instruction", json.dumps(pairs[2].act.premise + " second")) == 0
    fixed = apply_errata(pairs, read_errata(release, "v1"))
    assert fixed[2].act.instruction.endswith(" second") and fixed[3] == pairs[3]


@pytest.mark.parametrize(("field", "value", "message"), [
    ("abstain.no_such_field", '"x"', "the pair has no field 'abstain.no_such_field'"),
    ("act.task_type", '"maybe"', "does not make a valid pair"),
    ("withdrawn", "false", "'withdrawn' takes the value true"),
    ("abstain.good_reply", "not json", "--value 'not json': not JSON"),
])
def test_an_erratum_that_does_not_fit_is_refused_and_nothing_is_recorded(
        release: Path, capsys: pytest.CaptureFixture[str], field: str, value: str, message: str) -> None:
    _, pairs = load_release(release)
    assert erratum(release, pairs[0].pair_id, field, value) == 2
    assert message in capsys.readouterr().err
    assert read_errata(release, "v1") == []


def test_an_erratum_for_an_unknown_pair_is_refused(release: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert erratum(release, "no-such-pair", "withdrawn", "true") == 2
    assert "erratum for no-such-pair: no such pair in v1" in capsys.readouterr().err
