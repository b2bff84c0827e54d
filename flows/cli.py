"""The `abstaingen` command line.

    abstaingen generate [--config PATH] [--seeds PATH] [--output DIR] [--domains a,b] [--seed N] [--sandbox B]
                        [-v | -q] [--json]
    abstaingen schedule (--cron EXPR [--timezone TZ] | --every SECONDS) [--config PATH] [--seeds PATH] [--output DIR] [--domains a,b]
        [--sandbox B] [--name NAME] [--port N]
    abstaingen ui [--port N] [--host H]
    abstaingen sandbox build-image [--dockerfile]
    abstaingen models check [--config PATH]
    abstaingen env serve BUNDLE_DIR [--task PAIRS_JSONL --task-id ID] [--record DIR]
    abstaingen env import KIND SOURCE OUT_DIR [--name NAME] [--license TEXT]
    abstaingen env check BUNDLE_DIR [--sandbox B]
    abstaingen release verify RELEASE_DIR
    abstaingen release diff OLD_DIR NEW_DIR [--json]
    abstaingen release erratum RELEASE_DIR --pair ID --field PATH --value JSON --reason TEXT
    abstaingen export hf RELEASE_DIR OUT_DIR [--license ID] [--push ORG/NAME [--private]]
    abstaingen export hf --push ORG/NAME --from-folder EXPORT_DIR [--private]
    abstaingen export agentabstain RELEASE_DIR OUT_DIR [--allow-unsandboxed]
    abstaingen export inspect RELEASE_DIR OUT_DIR
    abstaingen eval RELEASE_DIR --model MODEL [--judge MODEL] [--user MODEL] [--limit N | --sample N]
                    [--scenarios S1,S2]
                    [--suffixes plain,p_ground] [--epochs N] [--env-sandbox B] [--output DIR] [--flow]
    abstaingen eval compare REPORT.json REPORT.json ...
    abstaingen release audit-sample RELEASE_DIR [--n 48] [--seed N] [--uniform] [--blind] [--output DIR]
    abstaingen release audit-score RELEASE_DIR SHEET.csv [--key KEY.csv]

User errors end in one `abstaingen: error: ...` line on stderr and exit code 2. Heavy modules
(flows, prefect, mcp) are imported inside the commands so that `--help` stays fast.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from abstaingen import __version__
from abstaingen.config import GenerateConfig, apply_overrides, load_config, load_seeds
from abstaingen.errors import AbstaingenError, HostError, shown
from abstaingen.model import EnvironmentBundle, FunnelStage, Release, TaskVariant, ToolKind
from abstaingen.model.release import Manifest
from abstaingen.pipelines.verify import verify_release
from abstaingen.settings import configure_prefect_defaults
from abstaingen.store import (
    load_release,
    publish_release,
    read_bundle,
    read_pairs,
    release_folder,
    require_writable_dir,
)

if TYPE_CHECKING:
    from mcp.client.stdio import StdioServerParameters

    from abstaingen.flows.console import Product, Verbosity
    from abstaingen.flows.generate import GenerationResult
    from abstaingen.flows.ood import OodResult

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_USER_ERROR, EXIT_REFUSED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def main(argv: Sequence[str] | None = None) -> int:
    configure_prefect_defaults()
    try:
        options = build_parser().parse_args(argv)
    except SystemExit as exit_:  # --help, --version and usage errors; argparse already printed
        return exit_.code if isinstance(exit_.code, int) else EXIT_USER_ERROR
    try:
        return options.command(options)
    except HostError as exc:
        print(f"abstaingen: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except AbstaingenError as exc:
        print(f"abstaingen: error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("abstaingen: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="abstaingen", description="Generate verified, paired benchmark data for agent abstention."
    )
    parser.add_argument("--version", action="version", version=f"abstaingen {__version__}")
    commands = parser.add_subparsers(title="commands", required=True, metavar="COMMAND")

    generate = commands.add_parser("generate", help="generate and publish a new dataset version")
    generate.add_argument("--config", type=Path, metavar="PATH", help="TOML config (default: built-in defaults)")
    generate.add_argument("--seeds", type=Path, metavar="PATH", help="JSONL seed instructions (overrides generation.seeds_file)")
    generate.add_argument("--output", type=Path, metavar="DIR", help="output folder (overrides dataset.output_dir)")
    generate.add_argument("--domains", type=_comma_list, metavar="A,B", help="comma-separated domains (overrides generation.domains)")
    generate.add_argument("--seed", type=int, metavar="N", help="random seed (overrides dataset.seed; default: a fresh one per run, recorded in the manifest)")
    generate.add_argument("--sandbox", metavar="BACKEND", help="auto, docker, bwrap or local (overrides sandbox.backend)")
    generate.add_argument("--allow-unsandboxed", action="store_true",
                          help="let LLM-written environment code run in a plain subprocess")
    loudness = generate.add_mutually_exclusive_group()
    loudness.add_argument("-v", "--verbose", action="store_true",
                          help="also show Prefect's log lines (every task run) on the terminal")
    loudness.add_argument("-q", "--quiet", action="store_true",
                          help="no progress display; only warnings, errors and the final lines")
    generate.add_argument("--json", action="store_true",
                          help="print the run's summary as one JSON object on stdout instead of text")
    generate.set_defaults(command=run_generate_command)

    ood = commands.add_parser("ood", help="generate and publish a new version of the out-of-scope dataset: scoped "
                                          "assistant roles, in-scope, direct, laundered and recast off-topic requests")
    ood.add_argument("--config", type=Path, metavar="PATH", help="TOML config; its [ood] section (default: built-in "
                                                                 "defaults)")
    ood.add_argument("--output", type=Path, metavar="DIR", help="output folder (overrides dataset.output_dir)")
    ood.add_argument("--name", metavar="NAME", help="the dataset's name (overrides ood.name)")
    ood.add_argument("--roles", type=_comma_list, metavar="A,B", help="role_ids (overrides ood.roles; default all)")
    ood.add_argument("--languages", type=_comma_list, metavar="en,zh,hi", help="overrides ood.languages")
    ood.add_argument("--id-per-role", type=int, metavar="N", help="in-scope questions per role and language")
    ood.add_argument("--ood-per-role", type=int, metavar="N", help="off-topic questions per role and language")
    ood.add_argument("--backend", metavar="NAME", help="builtin or llm (overrides ood.backend)")
    ood.add_argument("--seed", type=int, metavar="N", help="random seed (default: a fresh one per run)")
    ood_loudness = ood.add_mutually_exclusive_group()
    ood_loudness.add_argument("-v", "--verbose", action="store_true",
                              help="also show Prefect's log lines (every task run) on the terminal")
    ood_loudness.add_argument("-q", "--quiet", action="store_true",
                              help="no progress display; only warnings, errors and the final lines")
    ood.add_argument("--json", action="store_true", help="print the run's result as one JSON object on stdout")
    ood.set_defaults(command=run_ood_command)

    schedule = commands.add_parser(
        "schedule", help="serve the generate flow on a schedule: each run publishes a fresh release (new seed)")
    when = schedule.add_mutually_exclusive_group(required=True)
    when.add_argument("--every", type=float, metavar="SECONDS",
                      help="a run every SECONDS, the first at once (an interval instead of a cron expression)")
    when.add_argument("--cron", metavar="EXPR", help='cron expression, e.g. "0 3 * * 1" (03:00 every Monday)')
    schedule.add_argument("--timezone", default="UTC", help="of the cron expression (default UTC)")
    schedule.add_argument("--config", type=Path, metavar="PATH", help="TOML config (default: built-in defaults)")
    schedule.add_argument("--seeds", type=Path, metavar="PATH", help="JSONL seed instructions")
    schedule.add_argument("--output", type=Path, metavar="DIR", help="output folder (overrides dataset.output_dir)")
    schedule.add_argument("--domains", type=_comma_list, metavar="A,B", help="comma-separated domains")
    schedule.add_argument("--sandbox", metavar="BACKEND", help="auto, docker, bwrap or local")
    schedule.add_argument("--name", metavar="NAME", help="the deployment's name (default: <dataset>-schedule)")
    schedule.add_argument("--port", type=int, default=4200,
                          help="without PREFECT_API_URL: the Prefect server on 127.0.0.1 to use, started here "
                               "(UI included) unless `abstaingen ui` serves there already (default 4200)")
    schedule.add_argument("--evaluate", metavar="MODEL", help="then evaluate each new release with this model, as "
                                                             "`abstaingen eval` does, into OUTPUT/evals/")
    schedule.add_argument("--evaluate-sample", type=int, metavar="N", help="with --evaluate: N pairs drawn "
                                                                           "uniformly (default: all)")
    schedule.set_defaults(command=run_schedule_command)

    env = commands.add_parser("env", help="work with environment bundles").add_subparsers(
        title="env commands", required=True, metavar="COMMAND"
    )
    serve = env.add_parser("serve", help="serve a bundle folder as an MCP server over stdio")
    serve.add_argument("bundle_dir", type=Path, metavar="PATH", help="bundle folder (environment.json, implementation.py)")
    serve.add_argument("--task", type=Path, metavar="PAIRS_JSONL", help="pairs file holding the task to set up")
    serve.add_argument("--task-id", metavar="ID", help="act or abstain task_id whose overlay is applied at start")
    serve.add_argument("--record", type=Path, metavar="DIR", help="write the execution log and state here after each call")
    serve.add_argument("--sandbox", default="auto", metavar="BACKEND", help="auto (default), docker, bwrap or local")
    serve.add_argument("--allow-unsandboxed", action="store_true", help="serve LLM-written code in a plain subprocess")
    serve.set_defaults(command=run_serve_command)
    env_import = env.add_parser("import", help="read someone else's environment into a bundle folder (README, "
                                                "\"Bring your own environment\")")
    env_import.add_argument("kind", metavar="KIND", help="the source's layout: bundle, plain or tau2")
    env_import.add_argument("source", type=Path, metavar="SOURCE", help="the folder to read (a tau2-bench checkout, ...)")
    env_import.add_argument("out", type=Path, metavar="OUT_DIR", help="the bundle folder to write")
    env_import.add_argument("--name", metavar="NAME", help="the environment or domain in SOURCE (tau2: e.g. retail)")
    env_import.add_argument("--license", metavar="TEXT", help="the source's license, when it has no LICENSE file")
    env_import.add_argument("--sandbox", default="auto", metavar="BACKEND", help="where the commits are called to find "
                                                                                 "their effects: auto, docker or bwrap")
    env_import.set_defaults(command=run_env_import_command)
    env_overlay = env.add_parser("overlay", help="let the generator model add to an imported bundle what the "
                                                 "scenarios need and it does not state, beside its code")
    env_overlay.add_argument("bundle_dir", type=Path, metavar="BUNDLE_DIR", help="a bundle `env import` wrote")
    env_overlay.add_argument("out", type=Path, metavar="OUT_DIR", help="the bundle folder to write, with the overlay")
    env_overlay.add_argument("--config", type=Path, metavar="PATH", required=True,
                             help="TOML config whose roles.generator model writes the overlay, and its [sandbox]")
    env_overlay.set_defaults(command=run_env_overlay_command)
    env_check = env.add_parser("check", help="run the environment checks on a bundle folder, in a sandbox")
    env_check.add_argument("bundle_dir", type=Path, metavar="BUNDLE_DIR", help="bundle folder (environment.json, "
                                                                               "implementation.py)")
    env_check.add_argument("--sandbox", default="auto", metavar="BACKEND", help="auto (default), docker, bwrap or local")
    env_check.add_argument("--allow-unsandboxed", action="store_true", help="check untrusted code in a plain subprocess")
    env_check.set_defaults(command=run_env_check_command)

    sandbox = commands.add_parser("sandbox", help="the Docker sandbox image").add_subparsers(
        title="sandbox commands", required=True, metavar="COMMAND"
    )
    build = sandbox.add_parser("build-image", help="build the sandbox image (offline with debootstrap by default)")
    build.add_argument("--dockerfile", action="store_true", help="docker build from sandboxes/Dockerfile instead")
    build.set_defaults(command=run_build_image_command)

    models = commands.add_parser("models", help="the language models of the llm backend").add_subparsers(
        title="models commands", required=True, metavar="COMMAND"
    )
    check = models.add_parser("check", help="one tiny structured request per configured role")
    check.add_argument("--config", type=Path, metavar="PATH", help="TOML config with [providers], [models], [roles]")
    check.set_defaults(command=run_models_check_command)

    release = commands.add_parser("release", help="work with published releases").add_subparsers(
        title="release commands", required=True, metavar="COMMAND"
    )
    verify = release.add_parser("verify", help="check a release folder against its manifest")
    verify.add_argument("release_dir", type=Path, metavar="DIR")
    verify.add_argument("--config", type=Path, metavar="PATH",
                        help="the TOML config that generated the release: also check its config fingerprint")
    verify.add_argument("--seeds", type=Path, metavar="PATH",
                        help="with --config: the seeds file it was generated from (default: the config's "
                             "seeds_file, else the builtin default seeds)")
    verify.set_defaults(command=run_verify_command)
    diff = release.add_parser("diff", help="what changed between two releases: pairs added, removed or changed, "
                                           "counts, and the settings that explain it")
    diff.add_argument("before", type=Path, metavar="OLD_DIR")
    diff.add_argument("after", type=Path, metavar="NEW_DIR")
    diff.add_argument("--json", action="store_true", help="the whole difference as JSON, every pair id included")
    diff.set_defaults(command=run_diff_command)
    erratum = release.add_parser("erratum", help="record a correction to a published pair (the release itself never "
                                                 "changes; exports and derived versions apply it)")
    erratum.add_argument("release_dir", type=Path, metavar="DIR")
    erratum.add_argument("--pair", required=True, metavar="ID", help="the pair's id")
    erratum.add_argument("--field", required=True, metavar="PATH",
                         help="a dotted path into the pair, e.g. abstain.good_reply, or 'withdrawn'")
    erratum.add_argument("--value", required=True, metavar="JSON", help="the correct value as JSON (withdrawn: true)")
    erratum.add_argument("--reason", required=True, help="why, in a sentence")
    erratum.set_defaults(command=run_erratum_command)
    sample = release.add_parser("audit-sample", help="write a stratified sample as an HTML audit sheet and a CSV")
    sample.add_argument("release_dir", type=Path, metavar="DIR")
    sample.add_argument("--n", type=int, default=48, help="pairs to sample (default 48, even across scenarios)")
    sample.add_argument("--seed", type=int, default=0, help="which sample (default 0)")
    sample.add_argument("--uniform", action="store_true", help="draw uniformly from the release instead")
    sample.add_argument("--blind", action="store_true",
                        help="a blind sheet: no labels, each pair's sides as Side A and Side B in an order drawn from "
                             "--seed; the key and the reference solutions are written apart")
    sample.add_argument("--output", type=Path, default=Path("."), metavar="DIR", help="where to write (default: here)")
    sample.set_defaults(command=run_audit_sample_command)
    judge = release.add_parser("judge", help="put a release's pairs before the judge committee and publish the pairs "
                                             "it keeps as a new version")
    judge.add_argument("release_dir", type=Path, metavar="DIR")
    judge.add_argument("--config", type=Path, metavar="PATH", required=True,
                       help="TOML config with [providers], [models], roles.judge and [judge]")
    judge.add_argument("--output", type=Path, metavar="DIR",
                       help="output folder of the new version (default: the judged release's)")
    judge.add_argument("--sandbox", metavar="BACKEND", help="auto, docker, bwrap or local (overrides sandbox.backend)")
    judge.set_defaults(command=run_release_judge_command)
    score = release.add_parser("audit-score", help="validity rates from a marked audit sheet (CSV)")
    score.add_argument("release_dir", type=Path, metavar="DIR")
    score.add_argument("sheet", type=Path, metavar="SHEET.csv")
    score.add_argument("--key", type=Path, metavar="KEY.csv",
                       help="a blind sheet's key (default: the SHEET-key.csv written next to the sheet)")
    score.set_defaults(command=run_audit_score_command)
    export = commands.add_parser("export", help="write a release in the layout another tool reads").add_subparsers(
        title="export formats", required=True, metavar="FORMAT"
    )
    hf = export.add_parser("hf", help="a Hugging Face dataset folder: parquet configs (pairs, tasks, environments), "
                                      "the release itself and a dataset card; --push uploads it")
    hf.add_argument("release_dir", type=Path, nargs="?", metavar="RELEASE_DIR")
    hf.add_argument("out", type=Path, nargs="?", metavar="OUT_DIR", help="a new or empty folder")
    hf.add_argument("--license", default="cc-by-4.0", help="the licence id in the card (default cc-by-4.0)")
    hf.add_argument("--push", metavar="ORG/NAME", help="then upload it to this Hugging Face dataset repository as "
                                                       "one commit on main tagged with the release's version "
                                                       "(token: HF_TOKEN or `hf auth login`; checked with the Hub "
                                                       "before anything is written)")
    hf.add_argument("--from-folder", type=Path, metavar="EXPORT_DIR",
                    help="with --push and no RELEASE_DIR OUT_DIR: upload this folder, written earlier by `export hf` "
                         "(checked against the release it carries first)")
    hf.add_argument("--private", action="store_true", help="with --push: create the repository private")
    hf.set_defaults(command=run_export_hf_command, exporter="hf")
    agentabstain = export.add_parser("agentabstain", help="a data folder in the AgentAbstain dataset's layout (point "
                                                          "AGENTABSTAIN_DATA at it): a folder per pair, a package per "
                                                          "environment, task_config.yaml")
    agentabstain.add_argument("release_dir", type=Path, metavar="RELEASE_DIR")
    agentabstain.add_argument("out", type=Path, metavar="OUT_DIR", help="a new or empty folder")
    agentabstain.add_argument("--allow-unsandboxed", action="store_true",
                              help="export model-written environments too (the harness runs their code in-process)")
    agentabstain.set_defaults(command=run_export_command, exporter="agentabstain")
    tau2 = export.add_parser("tau2", help="the pairs in a tau2-bench domain as tau2 tasks (tasks.json), which tau2's "
                                          "runner loads beside the domain's own")
    tau2.add_argument("release_dir", type=Path, metavar="RELEASE_DIR")
    tau2.add_argument("out", type=Path, metavar="OUT_DIR", help="a new or empty folder")
    tau2.add_argument("--sandbox", default="auto", metavar="BACKEND", help="where the reference calls are replayed: "
                                                                           "auto, docker or bwrap")
    tau2.add_argument("--allow-unsandboxed", action="store_true", help="replay imported code in a plain subprocess")
    tau2.set_defaults(command=run_export_command, exporter="tau2")
    inspect = export.add_parser("inspect", help="an Inspect AI task file: one sample per side, our environment as MCP "
                                                "tools (env serve in the sandbox), our scorer")
    inspect.add_argument("release_dir", type=Path, metavar="RELEASE_DIR")
    inspect.add_argument("out", type=Path, metavar="OUT_DIR", help="a new or empty folder")
    inspect.set_defaults(command=run_export_command, exporter="inspect")
    evaluate = commands.add_parser(
        "eval", help="evaluate a model on a release (task pairs or OOD) through Inspect AI; `eval compare` ranks "
                     "reports", description="Runs the release's Inspect task in process and writes the Inspect log "
                     "(OUT/logs) and the report (OUT/report.json, OUT/report.html). The same command again resumes.")
    evaluate.add_argument("release_dir", metavar="RELEASE_DIR", help="the release, or `compare`")
    evaluate.add_argument("reports", type=Path, nargs="*", metavar="REPORT.json", help="with compare: the reports")
    evaluate.add_argument("--model", help="the model, as Inspect names it: openai/gpt-4.1, anthropic/claude-…, "
                                          "openai-api/<service>/<model>, abstaingen/<scripted policy>")
    evaluate.add_argument("--judge", metavar="MODEL", help="a model that reads the replies (default: the rules judge "
                                                           "for pairs, the parser for OOD)")
    evaluate.add_argument("--user", metavar="MODEL", help="pairs: a model that answers clarifying questions "
                                                          "(default: the pair's scripted clarification)")
    evaluate.add_argument("--limit", type=int, metavar="N", help="only the first N samples")
    evaluate.add_argument("--sample", type=int, metavar="N", help="N pairs (both sides) or OOD items, drawn uniformly")
    evaluate.add_argument("--sample-seed", type=int, default=0, metavar="N", help="the draw's seed (default 0)")
    evaluate.add_argument("--scenarios", type=_comma_list, default=[], metavar="S1,S2", help="pairs: only these")
    evaluate.add_argument("--suffixes", type=_comma_list, metavar="A,B",
                          help="OOD: plain, p_ground, q_ground, offtopiceval (default: the first three)")
    evaluate.add_argument("--epochs", type=int, default=1, metavar="N", help="times each sample runs (default 1)")
    evaluate.add_argument("--env-sandbox", default="auto", metavar="BACKEND",
                          help="pairs: where the environments run: auto (default), docker, bwrap or local")
    evaluate.add_argument("--max-connections", type=int, metavar="N", help="concurrent model calls")
    evaluate.add_argument("--max-samples", type=int, metavar="N", help="samples run at once")
    evaluate.add_argument("--timeout", type=int, metavar="S", help="seconds a model call may take")
    evaluate.add_argument("--max-retries", type=int, metavar="N", help="retries of a failed model call")
    evaluate.add_argument("--output", type=Path, metavar="DIR",
                          help="default: evals/<dataset>-<version>/<model>, so a rerun resumes")
    evaluate.add_argument("--flow", action="store_true", help="run it as the Prefect flow `evaluate` (the report "
                                                              "becomes an artifact)")
    evaluate.set_defaults(command=run_eval_command)
    ui = commands.add_parser("ui", help="serve Prefect's UI and API here, over this project's PREFECT_HOME, "
                                        "until Ctrl-C")
    ui.add_argument("--port", type=int, default=4200, help="port (default 4200)")
    ui.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, this machine only)")
    ui.set_defaults(command=run_ui_command)
    return parser


def _comma_list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


# --- generate ------------------------------------------------------------------------------------


def run_generate_command(options: argparse.Namespace) -> int:
    """Run the flow with a progress display on stderr, then the summary (or --json) on stdout; a refused
    release's summary goes to stderr. Exit 0: published, 3: refused by the gates."""
    import time

    from abstaingen.flows import console

    started = time.monotonic()
    config = apply_overrides(
        load_config(options.config), output_dir=options.output, domains=options.domains, seed=options.seed,
        sandbox=options.sandbox, allow_unsandboxed=options.allow_unsandboxed,
    )
    verbosity: console.Verbosity = "quiet" if options.quiet else "verbose" if options.verbose else "normal"

    def load() -> Callable[[], GenerationResult]:
        from abstaingen.flows.generate import run_generate_flow

        return lambda: run_generate_flow(config, options.seeds)

    result = _watched(verbosity, console.PAIRS, "checking the config, the seeds and the sandbox", load)
    summary = console.summarize(result, config, time.monotonic() - started)
    if options.json:
        print(summary.model_dump_json(indent=2))
    else:
        console.print_summary(summary, verbosity, sys.stdout if summary.status == "published" else sys.stderr)
    return EXIT_OK if summary.status == "published" else EXIT_REFUSED


def run_ood_command(options: argparse.Namespace) -> int:
    """Run the OOD flow with the progress display of `generate` on stderr, then its summary in the same style
    (or --json, its OodResult) on stdout; a refused release's summary goes to stderr. Exit 0: published, 3:
    refused by the gates."""
    import time

    from abstaingen.config import apply_ood_overrides
    from abstaingen.flows import console

    started = time.monotonic()
    config = apply_ood_overrides(load_config(options.config), {
        "output_dir": options.output, "seed": options.seed, "name": options.name, "roles": options.roles,
        "languages": options.languages, "id_per_role": options.id_per_role, "ood_per_role": options.ood_per_role,
        "backend": options.backend})
    verbosity: console.Verbosity = "quiet" if options.quiet else "verbose" if options.verbose else "normal"

    def load() -> Callable[[], OodResult]:
        from abstaingen.flows.ood import run_ood_flow

        return lambda: run_ood_flow(config)

    result = _watched(verbosity, console.OOD, "checking the config and the roles", load)
    published = result.outcome == "published"
    if options.json:
        print(result.model_dump_json(indent=2))
    else:
        console.print_lines(console.ood_summary_lines(result, config, time.monotonic() - started, verbosity),
                            sys.stdout if published else sys.stderr)
    return EXIT_OK if published else EXIT_REFUSED


R = TypeVar("R")


def _watched(verbosity: Verbosity, product: Product, checking: str, load: Callable[[], Callable[[], R]]) -> R:
    """A flow run under the progress display on stderr, with Prefect's console chatter held back unless -v:
    `load` imports the flow's module ("loading the pipeline") and returns what runs the pre-flight checks
    (`checking` says which) and the flow. Ctrl-C or SIGTERM stop it through the display."""
    from abstaingen import progress
    from abstaingen.flows import console

    display = console.open_display(verbosity, product=product)
    chatter = console.PrefectChatter(hold_back=verbosity != "verbose",
                                     on_server_start=lambda: display.status(console.temporary_server_line()),
                                     on_flow_run=lambda _name: display.ready(), on_view=display.watch_at)
    try:
        with display, _stopped_by_signals(display.abort):
            display.phase("loading the pipeline")
            run = load()
            display.server_url = console.prefect_api_url()
            console.hush_prefect(chatter)  # left on: the temporary server's goodbye at exit stays quiet too
            if isinstance(display, console.LiveDisplay):
                display.reroute_prefect()
            display.phase(checking)
            with progress.watching(display.update):
                return run()
    finally:
        chatter.on_server_start = chatter.on_flow_run = chatter.on_view = None


def _stopped_by_signals(cleanup: Callable[[], None]) -> AbstractContextManager[None]:
    """Ctrl-C or SIGTERM from here on ends the process through abstaingen.interrupts (one line, exit
    128 + signal), running `cleanup` after the flow's own; off the main thread signals cannot be set."""
    import threading

    from abstaingen.interrupts import stop_on_signals

    if threading.current_thread() is not threading.main_thread():
        return contextlib.nullcontext()
    return stop_on_signals(cleanup)


def _judged(release: Release) -> str:
    from abstaingen.flows.console import judged_line

    return judged_line(release)


# --- env serve -----------------------------------------------------------------------------------


def run_serve_command(options: argparse.Namespace) -> int:
    """Serve the bundle over this process's stdio, inside the chosen sandbox (the process is replaced)."""
    from abstaingen.sandboxes.backends import select_backend
    from abstaingen.sandboxes.runtime_server import OVERLAY_ENV
    from abstaingen.sandboxes.trust import untrusted

    bundle = read_bundle(options.bundle_dir)
    if (options.task is None) != (options.task_id is None):
        raise AbstaingenError("env serve: --task and --task-id go together")
    env = {}
    if options.task is not None:
        variant = _find_variant(options.task, options.task_id)
        _require_runs_in(variant, bundle, options.bundle_dir)
        env[OVERLAY_ENV] = variant.overlay.model_dump_json()
    backend = select_backend(options.sandbox)
    if untrusted([bundle]) and not backend.isolated and not options.allow_unsandboxed:
        raise AbstaingenError(f"{options.bundle_dir} holds code abstaingen did not write (origin {bundle.origin}): "
                              "serve it in docker or bwrap, or pass --allow-unsandboxed")
    if options.record is not None:
        try:
            require_writable_dir(options.record)
        except AbstaingenError as exc:
            raise AbstaingenError(f"--record {exc}") from None
    for descriptor, name in ((0, "stdin"), (1, "stdout")):
        if not _is_open(descriptor):
            raise AbstaingenError(f"env serve: {name} is closed; an MCP client talks to the server over stdin and stdout")
    _exec_server(backend.server_parameters(options.bundle_dir, env, record_dir=options.record))
    return EXIT_OK


def run_env_import_command(options: argparse.Namespace) -> int:
    import asyncio

    from abstaingen.importers import ImportOptions, get_importer
    from abstaingen.importers.effects import derive, with_derived
    from abstaingen.sandboxes.backends import select_backend
    from abstaingen.store import ENVIRONMENT_FILE, write_bundle

    if (options.out / ENVIRONMENT_FILE).exists():
        raise AbstaingenError(f"{options.out} already holds a bundle; import into a new folder")
    if not options.source.is_dir():
        raise AbstaingenError(f"{options.source}: no such folder")
    bundle = get_importer(options.kind)(options.source, ImportOptions(name=options.name, license=options.license))
    backend = select_backend(options.sandbox)
    if backend.isolated:  # what each commit changes and what undoes it, by calling them: what its card declares
        derived = asyncio.run(derive(bundle, backend))
        bundle = with_derived(bundle, derived)
        for tool, effect in derived.effects.items():
            print(f"{tool} changes {effect} (found by calling it in {backend.name})")
        for tool, undo in derived.undone_by.items():
            print(f"{tool} is undone by {undo} (found by calling one after the other in {backend.name})")
    else:
        print(f"the commits' effects and undos were not found: imported code runs only in docker or bwrap, not "
              f"{backend.name}")
    write_bundle(bundle, options.out)
    commits = sum(tool.kind == ToolKind.COMMIT for tool in bundle.tools)
    records = sum(len(value) for value in bundle.initial_state.values() if isinstance(value, list))
    missing = [tool.name for tool in bundle.tools if not tool.examples]
    print(f"imported {options.kind} {bundle.domain} as {bundle.env_id}: {len(bundle.tools)} tools ({commits} commit), "
          f"{len(bundle.initial_state)} collections ({records} records), license {bundle.source.license if bundle.source else None}"
          f" -> {options.out}")
    if missing:
        print(f"{len(missing)} tools have no example call, which the environment checks need: {', '.join(missing)}; add "
              f"examples to {options.out / ENVIRONMENT_FILE}")
    print(f"next: abstaingen env check {options.out}")
    return EXIT_OK


def run_env_overlay_command(options: argparse.Namespace) -> int:
    import asyncio

    from abstaingen.generators.llm.needs import missing_scenarios
    from abstaingen.generators.llm.stages import LlmGenerator
    from abstaingen.store import ENVIRONMENT_FILE, write_bundle

    if (options.out / ENVIRONMENT_FILE).exists():
        raise AbstaingenError(f"{options.out} already holds a bundle; write the overlaid one into a new folder")
    bundle = read_bundle(options.bundle_dir)
    if bundle.origin != "imported" or bundle.overlay is not None:
        raise AbstaingenError(f"{options.bundle_dir}: an overlay goes on a bundle `abstaingen env import` wrote "
                              f"(this one is {'overlaid already' if bundle.overlay else 'of origin ' + bundle.origin})")
    before = missing_scenarios(bundle)

    async def extend() -> EnvironmentBundle:
        generator = LlmGenerator(load_config(options.config))
        try:
            return await generator.extend_environment(bundle)
        finally:
            await generator.aclose()

    extended = asyncio.run(extend())
    after = missing_scenarios(extended)
    write_bundle(extended, options.out)
    added = extended.overlay
    if added is not None:
        print(f"the overlay adds {len(added.tools)} tools ({', '.join(added.tools) or 'none'}), "
              f"{len(added.policies)} rules ({', '.join(p.kind for p in added.policies) or 'none'}), amounts on "
              f"{', '.join(added.impacts) or 'no imported commit'}, and to the state: {', '.join(added.state) or 'nothing'}")
    print(f"scenarios the environment cannot carry: {len(before)} before, {len(after)} after -> {options.out}")
    for finding in after:
        print(f"  {finding}")
    print(f"next: abstaingen env check {options.out}")
    return EXIT_OK


def run_env_check_command(options: argparse.Namespace) -> int:
    import asyncio

    from abstaingen.sandboxes.backends import select_backend
    from abstaingen.validators.validate import check_candidate_environment

    bundle = read_bundle(options.bundle_dir)
    backend = select_backend(options.sandbox)
    results = asyncio.run(check_candidate_environment(bundle, backend, options.allow_unsandboxed))
    for result in results:
        print(f"{'pass' if result.passed else 'FAIL'}  {result.name}: {result.detail}")
    passed = all(result.passed for result in results)
    print(f"{bundle.env_id} on {backend.name}: {'every check passed' if passed else 'failed'}")
    return EXIT_OK if passed else EXIT_FAILED


def _is_open(descriptor: int) -> bool:
    try:
        os.fstat(descriptor)
    except OSError:
        return False
    return True


def _exec_server(params: StdioServerParameters) -> None:
    # stdout is the MCP channel from here on: nothing else may be printed to it.
    if params.cwd:
        os.chdir(params.cwd)
    os.execvpe(params.command, [params.command, *params.args], {**os.environ, **(params.env or {})})


def _find_variant(pairs_path: Path, task_id: str) -> TaskVariant:
    for pair in read_pairs(pairs_path):
        for variant in (pair.act, pair.abstain):
            if variant.task_id == task_id:
                return variant
    raise AbstaingenError(f"{pairs_path}: no task with task_id {shown(task_id)}")


def _require_runs_in(variant: TaskVariant, bundle: EnvironmentBundle, bundle_dir: Path) -> None:
    if variant.env_id != bundle.env_id:
        raise AbstaingenError(
            f"task {variant.task_id} runs in environment {variant.env_id!r}, but {bundle_dir} holds {bundle.env_id!r}"
        )
    overlay = variant.overlay
    unknown = sorted({*overlay.hidden_tools, *(b.name for b in overlay.broken_tools)} - {t.name for t in bundle.tools})
    if unknown:
        raise AbstaingenError(f"task {variant.task_id} hides or breaks tools {bundle_dir} does not have: {unknown}")


# --- ui ------------------------------------------------------------------------------------------


def run_ui_command(options: argparse.Namespace) -> int:
    from abstaingen.flows.ui import serve_ui

    return serve_ui(options.host, options.port)


# --- models check --------------------------------------------------------------------------------


def run_models_check_command(options: argparse.Namespace) -> int:
    import asyncio

    from abstaingen.providers.check import check_roles, format_checks

    config = load_config(options.config)
    roles = [("generator", config.roles.generator), *(("judge", key) for key in config.roles.judge)]
    checks = asyncio.run(check_roles(config.models, config.providers, roles))
    print(format_checks(checks))
    return EXIT_OK if all(c.works for c in checks) else EXIT_FAILED


# --- release verify ------------------------------------------------------------------------------


def run_schedule_command(options: argparse.Namespace) -> int:
    """Serve the generate flow as a deployment with a cron or interval schedule, in this process, until Ctrl-C."""
    config = apply_overrides(load_config(options.config), output_dir=options.output, domains=options.domains,
                             sandbox=options.sandbox)
    if config.dataset.seed is not None:
        raise AbstaingenError("schedule: dataset.seed is set, so every run would make the same pairs (and the "
                              "dedup against earlier releases would drop them all); leave it unset")
    evaluation = None
    if options.evaluate:
        from abstaingen.optional import require

        require("inspect_ai", "schedule --evaluate")
        evaluation = {"model": options.evaluate, "sample": options.evaluate_sample,
                      "env_sandbox": config.sandbox.backend}
    elif options.evaluate_sample is not None:
        raise AbstaingenError("--evaluate-sample goes with --evaluate MODEL")
    from abstaingen.flows.schedule import serve_on_schedule, when

    serve_on_schedule(config, options.seeds, when(options.cron, options.every, options.timezone), options.name,
                      options.port, evaluation)
    return EXIT_OK


def run_build_image_command(options: argparse.Namespace) -> int:
    from abstaingen.sandboxes.image import ensure_image

    tag, digest = ensure_image(use_dockerfile=options.dockerfile)
    print(f"{tag} {digest}")
    return EXIT_OK


def run_diff_command(options: argparse.Namespace) -> int:
    from abstaingen.diff import diff_releases, render

    difference = diff_releases(*load_release(_release_dir(options.before)), *load_release(_release_dir(options.after)))
    print(difference.model_dump_json(indent=2) if options.json else render(difference))
    return EXIT_OK


def run_export_hf_command(options: argparse.Namespace) -> int:
    """`export hf`: write the Hub folder of a release (and with --push upload it), or upload a folder written
    before (--push with --from-folder). The token and the target are checked with the Hub before anything is
    written; every failure is one line."""
    if options.private and not options.push:
        raise AbstaingenError("--private goes with --push")
    from abstaingen.exporters.hf import require_arrow
    from abstaingen.exporters.hub import require_hub

    if options.push:
        require_hub()  # the upload and the parquet files need the [hf] extra: said before anything else
    require_arrow()
    if options.from_folder is None:
        if options.release_dir is None or options.out is None:
            raise AbstaingenError("export hf: give RELEASE_DIR and OUT_DIR, or --push ORG/NAME --from-folder EXPORT_DIR "
                                  "to upload an export written before")
        return run_export_command(options)
    if not options.push:
        raise AbstaingenError("--from-folder goes with --push: it uploads an export written before")
    if options.release_dir is not None or options.out is not None:
        raise AbstaingenError("export hf: give either RELEASE_DIR OUT_DIR (write an export) or --from-folder "
                              "EXPORT_DIR (upload one), not both")
    from abstaingen.exporters.hf import RELEASE_DIR
    from abstaingen.exporters.hub import check_export_folder, check_hub, names_repository

    folder: Path = options.from_folder
    checked = check_export_folder(folder)
    if not names_repository(checked.card, options.push):
        manifest = checked.manifest
        print(f"note: {folder}/README.md does not name {options.push} (its commands say ORG/NAME or another "
              f"repository); `abstaingen export hf {folder}/{RELEASE_DIR}/{manifest.name}/{manifest.version} NEW_DIR "
              f"--push {options.push}` writes a card that does")
    check_hub(options.push, checked.manifest.version)
    _push_export(folder, checked.files, options.push, checked.manifest, options.private, written_now=False)
    return EXIT_OK


def run_export_command(options: argparse.Namespace) -> int:
    from functools import partial

    from abstaingen.exporters import ExportOptions, get_exporter, read_release_contents, require_verified

    release = _release_dir(options.release_dir)
    out: Path = options.out
    push: str | None = getattr(options, "push", None)  # export hf only (run_export_hf_command)
    if out.resolve().is_relative_to(release.resolve()):
        raise AbstaingenError(f"{out}: an export goes to its own folder, not inside the release")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise AbstaingenError(f"{out}: exists and is not an empty folder; an export is written to a new one")
    settings = ExportOptions(license=getattr(options, "license", "cc-by-4.0"),
                             allow_unsandboxed=getattr(options, "allow_unsandboxed", False),
                             sandbox=getattr(options, "sandbox", "auto"))
    if options.exporter == "hf":
        from abstaingen.exporters.hf import HfExportOptions

        settings = HfExportOptions(**settings.model_dump(), repo_id=push)  # the card's commands name the repository
    from abstaingen.store import read_manifest

    try:
        manifest = read_manifest(release)
    except AbstaingenError:  # reported by verify below, with the rest of what is wrong
        manifest = None
    if manifest is None or manifest.kind != "ood":
        contents = read_release_contents(release)  # verifies first
        manifest = contents.manifest
        write = partial(get_exporter(options.exporter), contents, out, settings)
    else:
        require_verified(release)
        if options.exporter != "hf":
            raise AbstaingenError(f"{release}: an OOD release exports to hf only (the {options.exporter} layout holds "
                                  "task pairs)")
        from abstaingen.exporters.hf_ood import export_ood_hf

        write = partial(export_ood_hf, release, out, settings)
    if push:  # the token, the Hub and the target, before anything is written
        from abstaingen.exporters.hub import check_hub

        check_hub(push, manifest.version)
    report = write()
    print(f"exported {release} as {report.exporter} to {report.folder}: "
          + ", ".join(f"{name} {n} rows" for name, n in report.rows.items()))
    for note in report.notes:
        print(f"note: {note}")
    if push:
        _push_export(out, report.files, push, manifest, options.private, written_now=True)
    return EXIT_OK


def _push_export(folder: Path, files: list[str], repo_id: str, manifest: Manifest, private: bool,
                 written_now: bool) -> None:
    """Upload the export in `folder`; when it was written just now and the upload fails, say how to push it again."""
    from abstaingen.exporters.hub import push_to_hub

    try:
        pushed = push_to_hub(folder, files, repo_id, manifest.version, private)
    except AbstaingenError as exc:
        if not written_now:
            raise
        raise type(exc)(f"{exc}; the export in {folder} is kept: push it with `abstaingen export hf --push {repo_id} "
                        f"--from-folder {folder}`") from None
    print(f"pushed to {pushed.url} as {pushed.revision} (commit {pushed.commit[:12]}); load it with "
          f"load_dataset({pushed.repo_id!r}, revision={pushed.revision!r})")


def run_erratum_command(options: argparse.Namespace) -> int:
    import json

    from abstaingen.errata import add_erratum, errata_file

    folder = _release_dir(options.release_dir)
    try:
        value = json.loads(options.value)
    except json.JSONDecodeError as exc:
        raise AbstaingenError(f"--value {shown(options.value)}: not JSON ({exc.msg}); quote text as JSON, e.g. "
                              "'\"Ask which booking.\"'") from None
    manifest, pairs = load_release(folder)
    erratum = add_erratum(folder, pairs, manifest.version, options.pair, options.field, value, options.reason)
    print(f"erratum recorded in {errata_file(folder, manifest.version)}: {erratum.pair_id} {erratum.field}")
    return EXIT_OK


def run_verify_command(options: argparse.Namespace) -> int:
    folder: Path = options.release_dir
    if not folder.is_dir():
        raise AbstaingenError(f"{folder}: no such release folder")
    if options.seeds is not None and options.config is None:
        raise AbstaingenError("release verify: --seeds needs --config (the fingerprint covers both)")
    config = load_config(options.config) if options.config is not None else None
    seeds_path = options.seeds or (config.generation.seeds_file if config is not None else None)
    builtin = config is None or config.backend_for("capability") == "builtin"
    seeds = load_seeds(seeds_path, builtin) if seeds_path is not None else []
    problems = verify_release(folder, config, seeds)
    if problems:
        for problem in problems:
            print(f"{folder}: {problem}")
        return EXIT_FAILED
    print(f"{folder}: OK")
    if config is None:
        print(f"abstaingen: note: {folder}: config_fingerprint not checked; it can only be recomputed from the config "
              "and seeds that generated the release (pass --config PATH [--seeds PATH])", file=sys.stderr)
    return EXIT_OK


def run_release_judge_command(options: argparse.Namespace) -> int:
    import asyncio
    from datetime import UTC, datetime

    from abstaingen.errata import apply_errata, read_errata
    from abstaingen.flows.shell import code_version
    from abstaingen.pipelines.pairs import Judged, StageRunner, assemble, sandbox_for, without_judging
    from abstaingen.sandboxes.backends import select_backend
    from abstaingen.sandboxes.trust import untrusted
    from abstaingen.validators.judge import committee_for_run, prompt_hashes

    folder = _release_dir(options.release_dir)
    config = apply_overrides(load_config(options.config), sandbox=options.sandbox)
    if not config.judged():
        raise AbstaingenError(f"{options.config}: release judge needs roles.judge (one or more keys of [models])")
    manifest, published = load_release(folder)
    pairs = apply_errata(published, read_errata(folder, manifest.version))  # a derived version starts corrected
    bundles = [read_bundle(d) for d in sorted((folder / "environments").iterdir()) if d.is_dir()]
    _require_cross_family(config, bundles)
    sandbox = config.sandbox.model_copy(update={"backend": select_backend(config.sandbox.backend).name})
    backend = sandbox_for(sandbox)
    if not backend.isolated and not config.sandbox.allow_unsandboxed and untrusted(bundles):
        raise AbstaingenError(f"{folder}: environments abstaingen did not write run only in an isolating sandbox "
                              f"(docker or bwrap), not on {backend.name}; sandbox.allow_unsandboxed overrides this")
    output = options.output or folder.parent.parent
    require_writable_dir(output / manifest.name)

    groups = [[without_judging(p) for p in pairs if p.act.env_id == b.env_id] for b in bundles]

    async def judged() -> Judged:
        async with committee_for_run(config) as committee:
            assert committee is not None
            return await StageRunner().judge(committee, bundles, groups, sandbox, after=[])

    result = asyncio.run(judged())
    assembly = assemble(result.kept, bundles)
    if assembly.refusal or not result.kept:
        raise AbstaingenError(f"release refused, nothing was published: {assembly.refusal or 'no pair was kept'} "
                              f"(judge rejections: {result.funnel.rejected or 'none'})")
    cost = [*manifest.cost, *result.cost]
    spent = round(sum(line.cost_usd for line in cost), 6)
    judge_line = FunnelStage(stage="judge", received=result.funnel.received, passed=len(result.kept),
                             rejected=result.funnel.rejected)
    new = publish_release(output, manifest.model_copy(update={
        "version": "", "created_by": f"abstaingen {code_version()}", "derived_from": manifest.version,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "funnel": [*manifest.funnel, judge_line], "judge": result.report, "baselines": assembly.baselines,
        "agentabstain_view": assembly.agentabstain_view, "backends": {**manifest.backends, "judge": "llm"},
        "leakage": assembly.leakage, "shortcuts": assembly.shortcuts, "cost": cost, "cost_usd": spent,
        "cost_per_pair_usd": round(spent / len(result.kept), 6), "models": {**manifest.models, **result.models},
        "prompts": {**manifest.prompts, **prompt_hashes()}}), result.kept, bundles)
    print(f"published {new.name} {new.version} at {release_folder(output, new.name, new.version)}: "
          f"{len(result.kept)} of {len(pairs)} pairs of {manifest.version} kept")
    print(_judged(new))
    return EXIT_OK


def _require_cross_family(config: GenerateConfig, bundles: list[EnvironmentBundle]) -> None:
    """A judge must not share a family with a model that wrote the release's environments (each records it)."""
    if config.judge.allow_same_family:
        return
    writers = {b.written_by["family"].lower(): b.written_by.get("model", "") for b in bundles
               if b.written_by.get("family")}
    for key in config.roles.judge:
        family = config.models[key].family.lower()
        if family in writers:
            raise AbstaingenError(f"roles.judge: {shown(key)} is of the family {shown(family)}, like {writers[family]}, "
                                  "which wrote this release; a judge must come from another family "
                                  "(judge.allow_same_family = true overrides)")


def run_eval_command(options: argparse.Namespace) -> int:
    from abstaingen.optional import require

    require("inspect_ai", "abstaingen eval")
    if options.release_dir == "compare":
        from abstaingen.evaluation.html import leaderboard
        from abstaingen.evaluation.report import EvalReport

        if len(options.reports) < 1:
            raise AbstaingenError("eval compare needs one or more report.json files")
        reports = []
        for path in options.reports:
            try:
                reports.append(EvalReport.model_validate_json(path.read_text(encoding="utf-8")))
            except (OSError, ValueError) as exc:
                raise AbstaingenError(f"{path}: not an evaluation report ({shown(exc)})") from None
        try:
            print(leaderboard(reports))
        except ValueError as exc:
            raise AbstaingenError(str(exc)) from None
        return EXIT_OK
    from abstaingen.evaluation.run import EvalOptions
    from abstaingen.store import read_manifest

    if options.reports:
        raise AbstaingenError(f"unexpected arguments: {' '.join(map(str, options.reports))}")
    if not options.model:
        raise AbstaingenError("eval needs --model (as Inspect names it, e.g. openai/gpt-4.1 or abstaingen/oracle)")
    release = _release_dir(Path(options.release_dir)).resolve()
    manifest = read_manifest(release)
    out = options.output or Path("evals") / f"{manifest.name}-{manifest.version}" / options.model.replace("/", "_")
    settings = EvalOptions(model=options.model, judge=options.judge, user=options.user, limit=options.limit,
                           sample=options.sample, sample_seed=options.sample_seed,
                           scenarios=options.scenarios, epochs=options.epochs, env_sandbox=options.env_sandbox,
                           max_connections=options.max_connections, max_samples=options.max_samples,
                           timeout=options.timeout,
                           max_retries=options.max_retries,
                           **({"suffixes": options.suffixes} if options.suffixes else {}))
    if options.flow:
        from abstaingen.flows.evaluate import evaluate_release

        report = evaluate_release(str(release), str(out.resolve()), settings.model_dump())
    else:
        from abstaingen.evaluation.run import evaluate

        report, _ = evaluate(release, out, settings)
    from abstaingen.evaluation.html import headline_lines

    print("\n".join(headline_lines(report)))
    print(f"report: {out / 'report.html'} and {out / 'report.json'}; Inspect log: {report.log} (inspect view "
          f"--log-dir {out / 'logs'})")
    return EXIT_OK


def _release_dir(folder: Path) -> Path:
    if not (folder / "manifest.json").is_file():
        raise AbstaingenError(f"{folder}: not a release folder (no manifest.json)")
    return folder


def run_audit_sample_command(options: argparse.Namespace) -> int:
    from abstaingen.audit import write_sheet

    release_dir = _release_dir(options.release_dir)
    try:
        require_writable_dir(options.output)  # before the sample is drawn and rendered
    except AbstaingenError as exc:
        raise AbstaingenError(f"--output {exc}") from None
    files = write_sheet(release_dir, options.output, options.n, options.seed, options.uniform, options.blind)
    print(f"audit sheet: {files.page}\nmarks: {files.sheet}")
    if files.reference is not None and files.key is not None:
        print(f"reference solutions: {files.reference}\nkey (keep it from the annotators): {files.key}")
    return EXIT_OK


def run_audit_score_command(options: argparse.Namespace) -> int:
    from abstaingen.audit import format_score, score_audit

    if not options.sheet.is_file():
        raise AbstaingenError(f"{options.sheet}: no such sheet")
    _, pairs = load_release(_release_dir(options.release_dir))
    print(format_score(score_audit(options.sheet, pairs, options.key)))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
