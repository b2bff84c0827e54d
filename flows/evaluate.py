"""The `evaluate` flow: a model evaluated on a release, as a Prefect flow run, its report an artifact;
and `generate-and-evaluate`, what `abstaingen schedule --evaluate MODEL` serves: the generate flow's run,
then the evaluation of the release it published, in one flow run.

A thin shell over abstaingen.evaluation.run: it runs (or resumes) the Inspect evaluation and writes the
report; the flow publishes the headline as a markdown artifact keyed by the release and model.

No `from __future__ import annotations`: Prefect builds the parameter schema from these annotations.
"""

import asyncio
import re
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import acreate_markdown_artifact, create_markdown_artifact
from prefect.cache_policies import NONE
from prefect.states import Failed, State

from abstaingen.config import GenerateConfig
from abstaingen.evaluation.html import headline_lines
from abstaingen.evaluation.report import EvalReport
from abstaingen.evaluation.run import EvalOptions, evaluate
from abstaingen.flows.generate import DEFAULT_CONFIG, GenerationResult, generate_release


@task(name="run the evaluation", cache_policy=NONE)
def run_evaluation(release: str, out: str, options: EvalOptions) -> EvalReport:
    report, _ = evaluate(Path(release), Path(out), options)
    return report


def _artifact(release: str, out: str, model: str, report: EvalReport) -> dict[str, str]:
    key = re.sub(r"[^a-z0-9-]+", "-", f"eval-{Path(release).parent.name}-{Path(release).name}-{model}".lower())
    return {"key": key[:120].strip("-"), "description": f"{model} on {release}",
            "markdown": "\n\n".join(headline_lines(report)) + f"\n\nReport: `{Path(out) / 'report.html'}`"}


@flow(name="evaluate", flow_run_name="evaluate {release}")
def evaluate_release(release: str, out: str, options: dict[str, Any]) -> EvalReport:
    """Evaluate `options["model"]` on the release folder `release`, writing to `out` (rerun: resume)."""
    settings = EvalOptions.model_validate(options)
    report = run_evaluation(release, out, settings)
    create_markdown_artifact(**_artifact(release, out, settings.model, report))
    return report


def evaluation_folder(output_dir: Path, name: str, version: str, model: str) -> Path:
    """Where a scheduled run writes the evaluation of the release it published."""
    return output_dir / "evals" / f"{name}-{version}" / model.replace("/", "_")


@flow(name="generate-and-evaluate")
async def generate_and_evaluate(config: GenerateConfig = DEFAULT_CONFIG, seeds_file: Path | None = None,
                                evaluation: dict[str, Any] | None = None) -> GenerationResult | State[Any]:
    """The generate flow's run; then, when it published, `evaluation` (EvalOptions) on the new release.
    The run ends as the generation did, or Failed when the evaluation failed (the release stays)."""
    generated = await generate_release.fn(config, seeds_file)
    result = generated.data if isinstance(generated, State) else generated
    if evaluation is None or not isinstance(result, GenerationResult) or result.release is None \
            or result.folder is None:
        return generated
    settings = EvalOptions.model_validate(evaluation)
    out = evaluation_folder(config.dataset.output_dir, result.release.name, result.release.version, settings.model)
    try:  # Inspect runs its own event loop: in a thread of its own
        report, _ = await asyncio.to_thread(evaluate, result.folder, out, settings)
    except Exception as exc:
        get_run_logger().error("the evaluation of %s failed: %s", result.folder, exc)
        return Failed(message=f"published {result.release.name} {result.release.version}; its evaluation failed: "
                              f"{exc}", data=result)
    await acreate_markdown_artifact(**_artifact(str(result.folder), str(out), settings.model, report))
    get_run_logger().info("evaluated %s on %s: %s", settings.model, result.folder, headline_lines(report)[0])
    return generated
