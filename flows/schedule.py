"""Scheduled regeneration: the generate flow served as a Prefect deployment with a cron or interval schedule.

`abstaingen schedule` runs `serve_on_schedule` in the foreground: Prefect's runner creates a flow run
at each tick and runs it in a subprocess, which loads the flow by its module path. Every run draws
a fresh seed (the config must leave dataset.seed unset) and is checked against every earlier release
of the dataset, so each tick publishes new pairs. Two runs of one dataset never overlap their work:
the flow holds the dataset's lock (abstaingen.checkpoints.DatasetLock) from reading the earlier
releases until it has published.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from prefect.flows import EntrypointType
from prefect.schedules import Cron, Interval, Schedule, validate_cron_string
from prefect.settings import PREFECT_API_URL, temporary_settings

from abstaingen.config import GenerateConfig
from abstaingen.errors import AbstaingenError
from abstaingen.flows.generate import generate_release, plan_run
from abstaingen.flows.ui import DEFAULT_HOST, DEFAULT_PORT, api_answers, start_server


def schedule_parameters(config: GenerateConfig, seeds_path: Path | None) -> dict[str, Any]:
    """The flow's parameters for every scheduled run, with the folders made absolute: the runs start in
    subprocesses and may outlive the shell this was typed in."""
    absolute = config.model_copy(update={
        "dataset": config.dataset.model_copy(update={"output_dir": config.dataset.output_dir.resolve()}),
        "llm": config.llm.model_copy(update={"cache_dir": config.llm.cache_dir.resolve()
                                             if config.llm.cache_dir is not None else None}),
    })
    return {"config": absolute.model_dump(mode="json"),
            "seeds_file": str(seeds_path.resolve()) if seeds_path is not None else None}


def when(cron: str | None, every_s: float | None, timezone: str = "UTC") -> tuple[Schedule, str]:
    """The schedule of `--cron` or `--every`, and how to say it."""
    if every_s is not None:
        if not 1 <= every_s <= 366 * 86400:
            raise AbstaingenError(f"--every {every_s:g}: give a number of seconds from 1 to a year")
        return Interval(every_s), f"every {every_s:g} s"
    assert cron is not None
    try:
        validate_cron_string(cron)
        return Cron(cron, timezone=timezone), f"at '{cron}' ({timezone})"
    except ValueError as exc:
        raise AbstaingenError(f"--cron {cron!r}: {exc}") from None


def serve_on_schedule(config: GenerateConfig, seeds_path: Path | None, schedule: tuple[Schedule, str],
                      name: str | None, port: int = DEFAULT_PORT, evaluation: dict[str, Any] | None = None) -> None:
    """Prefect schedules runs only through a server: the one PREFECT_API_URL names, else the one
    `abstaingen ui` serves on `port`, else one started here on `port` (with its UI) until Ctrl-C."""
    plan_run(config, seeds_path)  # bad input is one line now, not a failed run at the first tick
    deployment = name or f"{config.dataset.name}-schedule"
    with contextlib.ExitStack() as stack:
        api = os.environ.get("PREFECT_API_URL")
        if not api:
            api = f"http://{DEFAULT_HOST}:{port}/api"
            if not api_answers(api):
                server = stack.enter_context(start_server(DEFAULT_HOST, port))
                server.wait_until_healthy()
            stack.enter_context(temporary_settings({PREFECT_API_URL: api}))
        print(f"Prefect UI: {api.removesuffix('/api')}", flush=True)
        _serve(config, seeds_path, schedule, deployment, evaluation)


def _serve(config: GenerateConfig, seeds_path: Path | None, schedule: tuple[Schedule, str], deployment: str,
           evaluation: dict[str, Any] | None) -> None:
    parameters = schedule_parameters(config, seeds_path)
    served: Any = generate_release
    then = ""
    if evaluation is not None:  # the flow imports Inspect: only when asked for
        from abstaingen.flows.evaluate import generate_and_evaluate

        served, parameters = generate_and_evaluate, {**parameters, "evaluation": evaluation}
        then = f", then evaluated with {evaluation['model']} into {config.dataset.output_dir.resolve() / 'evals'}"
    print(f"serving {deployment}: a fresh release of {config.dataset.name} {schedule[1]} into "
          f"{config.dataset.output_dir.resolve()}{then}; Ctrl-C stops", flush=True)
    served.serve(  # until Ctrl-C, which Prefect's runner takes as the end of serving
        name=deployment, schedules=[schedule[0]], parameters=parameters,
        tags=[f"dataset:{config.dataset.name}", "scheduled"], entrypoint_type=EntrypointType.MODULE_PATH,
        description=f"Scheduled regeneration of {config.dataset.name}", print_starting_message=False,
    )
    print("abstaingen: schedule stopped", flush=True)
