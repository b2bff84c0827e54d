"""A builtin release put before a two-judge committee through the whole flow, as a user runs it:
`abstaingen generate --config` with roles.judge naming two stand-in models of two families, one behind
each API. The judges disagree on some pairs; the manifest and every pair say what they decided."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from builtin_fixtures import builtin_bundle
from prefect_runs import flow_env
from standin import Answer, Computed, StandIn
from test_judge import verdict

from abstaingen.model import Release
from abstaingen.store import load_release, publish_release
from abstaingen.validators.judge import COMMITTEE, RUBRIC

pytestmark = [pytest.mark.flow, pytest.mark.usefixtures("prefect_api")]  # flow runs report to the session's server


def write_config(folder: Path, standin: StandIn, judged: bool = True) -> Path:
    config = folder / ("judged.toml" if judged else "plain.toml")
    config.write_text(f"""
[dataset]
name = "judged"
seed = 7
output_dir = "{folder / 'out'}"
allow_incomplete = true  # the scripted committee rejects every S4 pair of this small release
[generation]
domains = ["travel", "banking"]
variants_per_scenario = 1
[sandbox]
backend = "local"
[providers.oa]
kind = "openai"
base_url = "{standin.openai_base_url}"
api_key_env = "STANDIN_KEY"
max_retries = 0
[providers.an]
kind = "anthropic"
base_url = "{standin.anthropic_base_url}"
api_key_env = "STANDIN_KEY"
max_retries = 0
[models.critic]
name = "critic-1"
provider = "oa"
family = "alpha"
input_usd_per_mtok = 1.0
output_usd_per_mtok = 4.0
[models.referee]
name = "referee-1"
provider = "an"
family = "beta"
[roles]
judge = {'["critic", "referee"]' if judged else '[]'}
[llm]
cache_dir = "{folder / 'cache'}"
""")
    return config


def judges(body: dict[str, Any]) -> Answer:
    """The critic finds every high-stakes twin unnatural; the referee finds the travel S2 request
    underspecified on the act side. Each is alone, so by majority (a tie fails) those pairs go."""
    text = json.dumps(body)
    if body["model"] == "critic-1" and "(S4)" in text:
        return Answer(verdict(no=("abstain.natural",)))
    if body["model"] == "referee-1" and "(S2)" in text and "travel" in text:
        return Answer(verdict(no=("act.fully_specified",)))
    return Answer(verdict())


def abstaingen(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = flow_env(STANDIN_KEY="sk-standin")  # reports to the session's Prefect server
    return subprocess.run([sys.executable, "-m", "abstaingen", *args], cwd=folder,
                          env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)


def generate(folder: Path, config: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return abstaingen(folder, "generate", "--config", str(config), *extra)


@pytest.fixture(scope="module")
def judged_twice(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("judged")
    with StandIn() as standin:
        standin.otherwise("judge_pair", Computed(judges))
        config = write_config(folder, standin)
        first = generate(folder, config)
        sent_first = standin.count("judge_pair")
        second = generate(folder, config, "--output", str(folder / "again"))  # the same run, elsewhere
        sent_second = standin.count("judge_pair") - sent_first
    return folder, first, second, sent_first, sent_second


def test_every_pair_carries_the_committees_verdicts(judged_twice) -> None:
    folder, first, *_ = judged_twice
    assert first.returncode == 0, first.stderr[-3000:]
    assert "judged by critic-1 (alpha), referee-1 (beta) (majority)" in first.stdout
    manifest, pairs = load_release(folder / "out" / "judged" / "v1")
    assert pairs and not {p.scenario for p in pairs if p.domain == "travel"} & {"S2", "S4"}
    for pair in pairs:
        verdicts = pair.validation.judge_verdicts
        assert {(v.model, v.side) for v in verdicts} == {(m, s) for m in ("critic-1", "referee-1")
                                                       for s in ("act", "abstain")}
        assert all(len(v.rubric) == len(RUBRIC[v.side]) and v.reason for v in verdicts)
        assert next(c for c in pair.validation.checks if c.name == COMMITTEE).passed
        assert pair.validation.judged_by == ["critic-1 (alpha)", "referee-1 (beta)"]


def test_the_manifest_has_agreement_rejections_and_the_judges(judged_twice) -> None:
    folder, *_ = judged_twice
    manifest, pairs = load_release(folder / "out" / "judged" / "v1")
    judge = manifest.judge
    assert judge.judged and judge.models == ["critic-1 (alpha)", "referee-1 (beta)"] and judge.rule == "majority"
    assert judge.rejected == {"abstain.natural": 2, "act.fully_specified": 1}
    funnel = {line.stage: line for line in manifest.funnel}
    assert funnel["judge"].rejected == {COMMITTEE: 3} and funnel["judge"].passed == len(pairs)
    assert funnel["judge"].received == funnel["gates"].passed == judge.pairs
    agreement = {a.item: a for a in judge.agreement}
    assert agreement["abstain.natural"].failed == 2 and agreement["abstain.natural"].pairs == judge.pairs
    assert agreement["abstain.natural"].raw == pytest.approx(1 - 2 / judge.pairs, abs=1e-4)
    assert agreement["act.solvable"].raw == 1.0 and agreement["act.solvable"].kappa is None
    assert manifest.models == {"critic": "critic-1 (alpha)", "referee": "referee-1 (beta)"}
    assert "judge_pair" in manifest.prompts
    critic = next(line for line in manifest.cost if line.model == "critic")
    assert critic.stage == "judge_pair" and critic.calls == judge.pairs and critic.cost_usd > 0


def test_rejudging_the_unchanged_release_makes_no_request(judged_twice) -> None:
    folder, _, second, sent_first, sent_second = judged_twice
    assert second.returncode == 0, second.stderr[-3000:]
    assert sent_first > 0 and sent_second == 0
    first, _ = load_release(folder / "out" / "judged" / "v1")
    again, _ = load_release(folder / "again" / "judged" / "v1")
    assert again.judge == first.judge and again.cost_usd == 0


@pytest.fixture(scope="module")
def published_then_judged(tmp_path_factory: pytest.TempPathFactory):
    """A builtin release published without a judge, then put before the committee twice."""
    folder = tmp_path_factory.mktemp("rejudged")
    with StandIn() as standin:
        standin.otherwise("judge_pair", Computed(judges))
        plain = generate(folder, write_config(folder, standin, judged=False))
        assert plain.returncode == 0, plain.stderr[-3000:]
        config = write_config(folder, standin)
        release = str(folder / "out" / "judged" / "v1")
        first = abstaingen(folder, "release", "judge", release, "--config", str(config))
        sent_first = standin.count("judge_pair")
        second = abstaingen(folder, "release", "judge", release, "--config", str(config))
        sent_second = standin.count("judge_pair") - sent_first
    return folder, plain, first, second, sent_first, sent_second


def test_a_published_builtin_release_is_judged_into_a_new_version(published_then_judged) -> None:
    folder, plain, first, _, sent, _ = published_then_judged
    assert "judged: no" in plain.stdout
    assert first.returncode == 0, first.stderr[-3000:]
    original, pairs = load_release(folder / "out" / "judged" / "v1")
    judged, kept = load_release(folder / "out" / "judged" / "v2")
    assert not original.judge.judged and judged.judge.judged and judged.derived_from == "v1"
    assert sent == 2 * len(pairs) and len(kept) == len(pairs) - 3
    assert judged.judge.rejected == {"abstain.natural": 2, "act.fully_specified": 1}
    assert judged.funnel[:-1] == original.funnel and judged.funnel[-1].stage == "judge"
    assert (judged.funnel[-1].received, judged.funnel[-1].passed) == (len(pairs), len(kept))
    assert all(p.validation.judged_by for p in kept)
    verify = abstaingen(folder, "release", "verify", str(folder / "out" / "judged" / "v2"))
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_rejudging_a_release_makes_no_request(published_then_judged) -> None:
    folder, _, first, second, _, sent_again = published_then_judged
    assert second.returncode == 0, second.stderr[-3000:]
    assert sent_again == 0
    v2, pairs_v2 = load_release(folder / "out" / "judged" / "v2")
    v3, pairs_v3 = load_release(folder / "out" / "judged" / "v3")
    assert pairs_v3 == pairs_v2 and v3.judge == v2.judge


def test_a_release_written_by_a_judges_family_is_refused(tmp_path: Path, standin: StandIn) -> None:
    bundle = builtin_bundle("travel").model_copy(update={"written_by": {"model": "writer-9", "family": "alpha"}})
    publish_release(tmp_path / "out", Release(name="judged", version="", created_by="test", config_fingerprint="-",
                                              sandbox="local", counts={}, total_pairs=0, funnel=[]), [], [bundle])
    release = tmp_path / "out" / "judged" / "v1"
    config = write_config(tmp_path, standin)
    config.write_text(config.read_text().replace('family = "alpha"', 'family = "Alpha"'))
    refused = abstaingen(tmp_path, "release", "judge", str(release), "--config", str(config))
    assert refused.returncode == 2 and "a judge must come from another family" in refused.stderr
    assert "writer-9" in refused.stderr and "Traceback" not in refused.stderr
