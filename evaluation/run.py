"""`abstaingen eval`: a model on a release, through Inspect AI, in process.

The release's task (pairs or OOD, by its manifest) runs under `inspect_ai.eval_set` with its logs in
`OUT/logs`; the report is written as `OUT/report.json` and `OUT/report.html`. Running the same command
again resumes: a finished log is kept as it is, an unfinished one is retried with its completed samples
reused, so no finished sample runs twice.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from inspect_ai import Task, eval_set
from inspect_ai._util.error import PrerequisiteError
from inspect_ai.log import read_eval_log
from inspect_ai.model import get_model
from pydantic import Field

from abstaingen.errors import AbstaingenError
from abstaingen.evaluation.html import render_html
from abstaingen.evaluation.ood_task import ood_task
from abstaingen.evaluation.pairs_task import MESSAGE_LIMIT, pairs_task
from abstaingen.evaluation.report import EvalReport, build_report
from abstaingen.model.common import Model
from abstaingen.model.ood import OodItem
from abstaingen.model.release import OodRelease
from abstaingen.store import ITEMS_FILE, PAIRS_FILE, read_manifest, read_models, read_pairs

REPORT_JSON, REPORT_HTML = "report.json", "report.html"


class EvalOptions(Model):
    model: str = Field(description="the evaluated model, as Inspect names it (openai/gpt-4.1, abstaingen/oracle, …)")
    judge: str | None = Field(default=None, description="a model that reads the replies (default: the rules judge "
                                                        "for pairs, the parser for OOD)")
    user: str | None = Field(default=None, description="pairs: a model that plays the user who answers a "
                                                       "clarifying question (default: the pair's clarification)")
    limit: int | None = Field(default=None, description="run only the first N samples")
    sample: int | None = Field(default=None, description="run N pairs (both sides) or N OOD items (every suffix), "
                                                         "drawn uniformly with `sample_seed`")
    sample_seed: int = Field(default=0, description="the seed of that draw")
    scenarios: list[str] = Field(default_factory=list, description="pairs: only these scenarios (S1..S8)")
    suffixes: list[str] = Field(default_factory=lambda: ["plain", "p_ground", "q_ground"],
                                description="OOD: the evaluation suffixes (plain, p_ground, q_ground, offtopiceval)")
    epochs: int = Field(default=1, ge=1, description="times each sample runs")
    env_sandbox: str = Field(default="auto", description="pairs: where `env serve` runs the environment")
    message_limit: int = Field(default=MESSAGE_LIMIT, description="pairs: messages per episode (30 turns)")
    max_connections: int | None = Field(default=None, description="concurrent model calls (Inspect's default "
                                                                  "otherwise)")
    max_samples: int | None = Field(default=None, description="samples run at once")
    timeout: int | None = Field(default=None, description="seconds a model call may take (Inspect's default "
                                                          "otherwise)")
    max_retries: int | None = Field(default=None, description="retries of a failed model call (Inspect's default "
                                                              "otherwise)")


def task_for(release: Path, options: EvalOptions) -> Task:
    manifest = read_manifest(release)
    if isinstance(manifest, OodRelease):
        return ood_task(str(release), options.suffixes, options.judge)
    return pairs_task(str(release), options.env_sandbox, options.scenarios, options.judge, options.user,
                      message_limit=options.message_limit)


def sample_ids(release: Path, options: EvalOptions) -> list[str] | None:
    """The ids of the samples of `options.sample` pairs or items drawn uniformly (None: every sample)."""
    if options.sample is None:
        return None
    rng = random.Random(options.sample_seed)
    if isinstance(read_manifest(release), OodRelease):
        items = sorted(item.item_id for item in read_models(release / ITEMS_FILE, OodItem, "OOD item"))
        return [f"{item}:{suffix}" for item in rng.sample(items, min(options.sample, len(items)))
                for suffix in options.suffixes]
    pairs = [p for p in read_pairs(release / PAIRS_FILE) if not options.scenarios or p.scenario in options.scenarios]
    return [side.task_id for pair in rng.sample(pairs, min(options.sample, len(pairs)))
            for side in (pair.act, pair.abstain)]


def require_models(options: EvalOptions) -> None:
    """Every model the run names can be made (a known provider, its client installed, its key set): one
    line naming the option otherwise, before anything runs."""
    for option, name in (("--model", options.model), ("--judge", options.judge), ("--user", options.user)):
        if name is None:
            continue
        try:
            get_model(name)
        except (ValueError, PrerequisiteError, AbstaingenError) as exc:
            said = " ".join(re.sub(r"\[/?[a-z ]+\]", "", str(exc)).split()).removeprefix("ERROR: ")
            raise AbstaingenError(f"{option} {name}: {said}") from None


def evaluate(release: Path, out: Path, options: EvalOptions, display: str = "none") -> tuple[EvalReport, Path]:
    """Run (or resume) the evaluation and write its report; the report and the log it was read from."""
    require_models(options)
    out.mkdir(parents=True, exist_ok=True)
    logs = out / "logs"
    # fail_on_error=False: an episode that errors is logged and counted, the others go on; log_buffer=1: every
    # finished sample is in the log at once, so a killed run resumes from all of them
    finished, results = eval_set(
        task_for(release, options), log_dir=str(logs), model=options.model, limit=options.limit,
        sample_id=sample_ids(release, options), epochs=options.epochs, fail_on_error=False, retry_attempts=1,
        retry_wait=1, log_buffer=1, display=display, score_display=False,  # type: ignore[arg-type]
        max_samples=options.max_samples, max_connections=options.max_connections, timeout=options.timeout,
        max_retries=options.max_retries)
    if not results:
        raise AbstaingenError(f"Inspect wrote no log in {logs}")
    log_path = results[0].location.removeprefix("file://").removeprefix("file:")  # a rerun reads it back as a URI
    log = read_eval_log(log_path)
    if not finished or log.status != "success":
        reason = log.error.message.splitlines()[0] if log.error else log.status
        raise AbstaingenError(f"the evaluation did not finish ({reason}); run the same command again to resume it "
                              f"(log: {log_path})")
    report = build_report(log, log_path)
    write_report(report, out)
    return report, Path(log_path)


def write_report(report: EvalReport, out: Path) -> None:
    (out / REPORT_JSON).write_text(report.model_dump_json(indent=1) + "\n", encoding="utf-8")
    (out / REPORT_HTML).write_text(render_html(report), encoding="utf-8")
