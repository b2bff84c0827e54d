"""The `evaluate` flow: a model evaluated on a release, as a Prefect flow run, its report an artifact.

A thin shell over abstaingen.evaluation.run: one task runs (or resumes) the Inspect evaluation and writes
the report; the flow publishes the headline as a markdown artifact keyed by the release and model. A
schedule can run it after the generate flow, on the release that flow published.

No `from __future__ import annotations`: Prefect builds the parameter schema from these annotations.
"""

import re
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NONE

from abstaingen.evaluation.html import headline_lines
from abstaingen.evaluation.report import EvalReport
from abstaingen.evaluation.run import EvalOptions, evaluate


@task(name="run the evaluation", cache_policy=NONE)
def run_evaluation(release: str, out: str, options: EvalOptions) -> EvalReport:
    report, _ = evaluate(Path(release), Path(out), options)
    return report


@flow(name="evaluate", flow_run_name="evaluate {release}")
def evaluate_release(release: str, out: str, options: dict[str, Any]) -> EvalReport:
    """Evaluate `options["model"]` on the release folder `release`, writing to `out` (rerun: resume)."""
    settings = EvalOptions.model_validate(options)
    report = run_evaluation(release, out, settings)
    key = re.sub(r"[^a-z0-9-]+", "-", f"eval-{Path(release).parent.name}-{Path(release).name}-{settings.model}".lower())
    create_markdown_artifact(key=key[:120].strip("-"), description=f"{settings.model} on {release}",
                             markdown="\n\n".join(headline_lines(report))
                             + f"\n\nReport: `{Path(out) / 'report.html'}`")
    return report
