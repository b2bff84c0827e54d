from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from abstaingen.config import GenerateConfig, SeedInstruction
from abstaingen.flows import cli
from abstaingen.flows import generate as generate_flow
from abstaingen.flows.generate import GenerationResult, plan_run
from abstaingen.generators.builtin import DOMAIN_NAMES
from abstaingen.model import EnvironmentBundle, Release, TaskOverlay, TaskPair
from abstaingen.sandboxes import runtime_server
from abstaingen.settings import configure_prefect_defaults
from abstaingen.store import counts_for, publish_release, write_bundle

PairFactory = Callable[..., TaskPair]


def assert_one_error_line(capsys: pytest.CaptureFixture[str], *fragments: str) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("abstaingen: error: ")
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


class FakeFlow:
    """Stands in for abstaingen.flows.generate.run_generate_flow: runs the real pre-flight checks, then
    records what the CLI passed instead of running the flow."""

    def __init__(self, release: Release | None = None, raises: BaseException | None = None):
        self.release, self.raises = release, raises
        self.calls: list[tuple[GenerateConfig, Path | None]] = []

    def run_generate_flow(self, config: GenerateConfig, seeds_path: Path | None = None) -> GenerationResult:
        plan_run(config, seeds_path)
        self.calls.append((config, seeds_path))
        if self.raises is not None:
            raise self.raises
        if self.release is None:
            return GenerationResult(outcome="refused", refusal="S3 has a one-feature shortcut")
        return GenerationResult(outcome="published", release=self.release)


@pytest.fixture
def fake_flow(monkeypatch: pytest.MonkeyPatch, make_pair: PairFactory, tmp_path: Path) -> FakeFlow:
    pairs = [make_pair(1), make_pair(2)]
    flow = FakeFlow(
        Release(
            name="abstaingen-builtin", version="v3", created_by="t", config_fingerprint="0" * 64,
            sandbox="local", counts=counts_for(pairs), total_pairs=2, funnel=[],
        )
    )
    monkeypatch.setattr(generate_flow, "run_generate_flow", flow.run_generate_flow)
    monkeypatch.chdir(tmp_path)  # the pre-flight checks make the default output folder
    return flow


# --- generate ------------------------------------------------------------------------------------


def test_generate_with_missing_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["generate", "--config", str(tmp_path / "missing.toml")]) == 2
    assert_one_error_line(capsys, "missing.toml: config file not found")


def test_generate_with_malformed_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[dataset]\nname = \n")
    assert cli.main(["generate", "--config", str(config)]) == 2
    assert_one_error_line(capsys, "config.toml:2:", "malformed TOML")


def test_generate_with_unknown_domain_in_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[generation]\ndomains = ["mars"]\n')
    assert cli.main(["generate", "--config", str(config)]) == 2
    assert_one_error_line(capsys, "generation.domains: unknown domain 'mars'")


def test_generate_with_unknown_domain_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["generate", "--domains", f"{DOMAIN_NAMES[0]},mars"]) == 2
    assert_one_error_line(capsys, "--domains: unknown domain 'mars'")


def test_generate_with_bad_seeds(tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_flow: FakeFlow) -> None:
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text('{"instruction": "ok"}\n{"instruction": 3}\n')
    assert cli.main(["generate", "--seeds", str(seeds)]) == 2
    assert_one_error_line(capsys, "seeds.jsonl:2: instruction:")
    assert fake_flow.calls == []


def test_generate_passes_overrides_and_seeds_and_prints_a_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_flow: FakeFlow
) -> None:
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text('{"instruction": "Move my meeting"}\n')
    domains = ",".join(DOMAIN_NAMES[:2])
    code = cli.main(
        ["generate", "--seeds", str(seeds), "--output", str(tmp_path / "out"), "--domains", domains, "--seed", "11"]
    )

    assert code == 0
    [(config, given_seeds)] = fake_flow.calls
    assert config.dataset.output_dir == tmp_path / "out"
    assert config.generation.domains == DOMAIN_NAMES[:2]
    assert config.dataset.seed == 11
    assert given_seeds == seeds
    out = capsys.readouterr().out
    assert f"v3 at {tmp_path / 'out' / 'abstaingen-builtin' / 'v3'}" in out
    assert "pairs: 2" in out
    assert "S5 2" in out


def test_generate_reads_the_configs_seeds_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_flow: FakeFlow
) -> None:
    (tmp_path / "seeds.jsonl").write_text('{"instruction": "Archive old mail"}\n')
    (tmp_path / "config.toml").write_text('[generation]\nseeds_file = "seeds.jsonl"\n')
    assert cli.main(["generate", "--config", str(tmp_path / "config.toml")]) == 0
    [(config, seeds_option)] = fake_flow.calls
    assert seeds_option is None and config.generation.seeds_file == tmp_path / "seeds.jsonl"
    assert plan_run(config, None).seeds == [SeedInstruction(instruction="Archive old mail")]


def test_generate_without_seeds_runs_the_default_seeds(fake_flow: FakeFlow) -> None:
    assert cli.main(["generate"]) == 0
    assert fake_flow.calls[0] == (GenerateConfig(), None)
    assert len(plan_run(GenerateConfig(), None).seeds) == len(DOMAIN_NAMES)


def test_a_refused_release_exits_3_and_says_why(fake_flow: FakeFlow, capsys: pytest.CaptureFixture[str]) -> None:
    fake_flow.release = None
    assert cli.main(["generate"]) == 3
    assert "release refused" in capsys.readouterr().err


def test_interrupt_exits_130(fake_flow: FakeFlow, capsys: pytest.CaptureFixture[str]) -> None:
    fake_flow.raises = KeyboardInterrupt()
    assert cli.main(["generate"]) == 130
    assert "Traceback" not in capsys.readouterr().err


def test_usage_errors_exit_2_and_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2
    assert cli.main(["generate", "--seed", "seven"]) == 2
    assert cli.main(["--help"]) == 0
    assert "generate" in capsys.readouterr().out


def test_main_sets_prefect_defaults_before_anything_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_flow: FakeFlow
) -> None:
    monkeypatch.delenv("PREFECT_HOME", raising=False)
    monkeypatch.delenv("PREFECT_SERVER_ANALYTICS_ENABLED", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path / "state" if (tmp_path / "state").mkdir() else tmp_path)
    cli.main(["generate"])
    # one per user, not per folder a run starts in
    assert os.environ["PREFECT_HOME"] == str(tmp_path / "state" / "abstaingen" / "prefect")
    assert os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] == "false"


def test_prefect_defaults_keep_what_the_user_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PREFECT_HOME", "/somewhere/else")
    monkeypatch.delenv("PREFECT_SERVER_ANALYTICS_ENABLED", raising=False)
    configure_prefect_defaults()
    assert os.environ["PREFECT_HOME"] == "/somewhere/else"
    assert os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] == "false"


@pytest.mark.component
def test_missing_config_in_a_real_process(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "abstaingen", "generate", "--config", "missing.toml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip() == "abstaingen: error: missing.toml: config file not found"


# --- env serve -----------------------------------------------------------------------------------


class FakeExec:
    """Stands in for the exec that replaces the CLI with the sandboxed server."""

    def __init__(self) -> None:
        self.params: StdioServerParameters | None = None

    def __call__(self, params: StdioServerParameters) -> None:
        self.params = params

    @property
    def argv(self) -> list[str]:
        return [] if self.params is None else [self.params.command, *self.params.args]


@pytest.fixture
def fake_runtime(monkeypatch: pytest.MonkeyPatch) -> FakeExec:
    runtime = FakeExec()
    monkeypatch.setattr(cli, "_exec_server", runtime)
    return runtime


@pytest.fixture
def bundle_dir(tmp_path: Path, tiny_bundle: EnvironmentBundle) -> Path:
    write_bundle(tiny_bundle, tmp_path / "bundle")
    return tmp_path / "bundle"


@pytest.fixture
def pairs_file(tmp_path: Path, make_pair: PairFactory) -> Path:
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(make_pair(n).model_dump_json() + "\n" for n in (1, 2)))
    return path


def test_serve_passes_the_bundle_and_record_dir(bundle_dir: Path, tmp_path: Path, fake_runtime: FakeExec) -> None:
    assert cli.main(["env", "serve", str(bundle_dir), "--record", str(tmp_path / "rec"), "--sandbox", "local",
                     "--allow-unsandboxed"]) == 0  # a hand-made bundle: not the builtin generator's code
    assert fake_runtime.argv[-7:] == [str(bundle_dir.resolve()), "--memory-mb", "1024", "--call-timeout-s", "10.0",
                                      "--record", str((tmp_path / "rec").resolve())]
    assert (tmp_path / "rec").is_dir()


def test_serve_applies_the_tasks_overlay(bundle_dir: Path, pairs_file: Path, fake_runtime: FakeExec) -> None:
    code = cli.main(["env", "serve", str(bundle_dir), "--task", str(pairs_file), "--task-id", "t2-abstain"])
    assert code == 0
    overlay = fake_runtime.params.env[runtime_server.OVERLAY_ENV]
    assert TaskOverlay.model_validate_json(overlay) == TaskOverlay(hidden_tools=["cancel_booking"])


def test_serve_runs_in_the_strongest_sandbox_by_default(bundle_dir: Path, fake_runtime: FakeExec) -> None:
    from abstaingen.sandboxes.backends import CONFINE, select_backend

    assert cli.main(["env", "serve", str(bundle_dir), "--allow-unsandboxed"]) == 0
    chosen, params = select_backend("auto").name, fake_runtime.params
    # every backend starts under the launcher that caps and reaps the sandbox's tree (docker: the client)
    assert params.command == sys.executable and str(CONFINE) in params.args
    assert ("bwrap" in params.args) is (chosen == "bwrap")
    assert ("docker" in params.args) is (chosen == "docker")


def test_serve_refuses_llm_code_outside_a_sandbox(
    tmp_path: Path, tiny_bundle: EnvironmentBundle, capsys: pytest.CaptureFixture[str], fake_runtime: FakeExec
) -> None:
    write_bundle(tiny_bundle.model_copy(update={"origin": "llm"}), tmp_path / "llm")
    assert cli.main(["env", "serve", str(tmp_path / "llm"), "--sandbox", "local"]) == 2
    assert_one_error_line(capsys, "holds code abstaingen did not write (origin llm)")
    assert fake_runtime.params is None
    assert cli.main(["env", "serve", str(tmp_path / "llm"), "--sandbox", "local", "--allow-unsandboxed"]) == 0


def test_serve_rejects_a_folder_that_is_not_a_bundle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_runtime: FakeExec
) -> None:
    assert cli.main(["env", "serve", str(tmp_path)]) == 2
    assert_one_error_line(capsys, "not a bundle folder")
    assert fake_runtime.argv == []


def test_serve_rejects_an_unknown_task(
    bundle_dir: Path, pairs_file: Path, capsys: pytest.CaptureFixture[str], fake_runtime: FakeExec
) -> None:
    assert cli.main(["env", "serve", str(bundle_dir), "--task", str(pairs_file), "--task-id", "t9-act"]) == 2
    assert_one_error_line(capsys, "no task with task_id 't9-act'")


def test_serve_needs_task_and_task_id_together(
    bundle_dir: Path, capsys: pytest.CaptureFixture[str], fake_runtime: FakeExec
) -> None:
    assert cli.main(["env", "serve", str(bundle_dir), "--task-id", "t1-act"]) == 2
    assert_one_error_line(capsys, "--task and --task-id go together")


def test_serve_rejects_a_task_from_another_environment(
    bundle_dir: Path,
    tmp_path: Path,
    make_pair: PairFactory,
    capsys: pytest.CaptureFixture[str],
    fake_runtime: FakeExec,
) -> None:
    pairs = tmp_path / "other.jsonl"
    pairs.write_text(make_pair(1, env_id="bank-1").model_dump_json() + "\n")
    assert cli.main(["env", "serve", str(bundle_dir), "--task", str(pairs), "--task-id", "t1-act"]) == 2
    assert_one_error_line(capsys, "runs in environment 'bank-1'")


# --- release verify ------------------------------------------------------------------------------


@pytest.fixture
def release_dir(tmp_path: Path, tiny_bundle: EnvironmentBundle, make_pair: PairFactory) -> Path:
    draft = Release(
        name="demo", version="", created_by="t", config_fingerprint="0" * 64, sandbox="local",
        counts={}, total_pairs=0, funnel=[],
    )
    publish_release(tmp_path, draft, [make_pair(1)], [tiny_bundle])
    return tmp_path / "demo" / "v1"


def test_verify_ok(release_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["release", "verify", str(release_dir)]) == 0
    assert capsys.readouterr().out.strip() == f"{release_dir}: OK"


def test_verify_reports_tampering(release_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pairs = release_dir / "pairs.jsonl"
    pairs.write_text(pairs.read_text().replace("Cancel booking B1", "Cancel booking B2"))
    assert cli.main(["release", "verify", str(release_dir)]) == 1
    out = capsys.readouterr().out
    assert "pairs.jsonl: sha256" in out
    assert "OK" not in out


def test_verify_of_a_missing_folder_is_a_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["release", "verify", str(tmp_path / "nope")]) == 2
    assert_one_error_line(capsys, "no such release folder")


def test_verify_of_a_folder_without_manifest_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["release", "verify", str(tmp_path)]) == 1
    assert "manifest.json is missing" in capsys.readouterr().out


def test_manifest_is_plain_json(release_dir: Path) -> None:
    # users read manifests with other tools too: keys sorted, indented
    text = (release_dir / "manifest.json").read_text()
    assert json.loads(text)["version"] == "v1"
    assert text.startswith("{\n  \"")
    assert list(json.loads(text)) == sorted(json.loads(text))


@pytest.mark.component
def test_serve_over_stdio_for_real(bundle_dir: Path, pairs_file: Path, tmp_path: Path) -> None:
    """A real MCP client sees the abstain task's overlay: the hidden commit tool is not listed."""
    command = ["env", "serve", str(bundle_dir), "--task", str(pairs_file), "--task-id", "t1-abstain"]
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "abstaingen", *command, "--record", str(tmp_path / "rec")]
    )

    async def session() -> tuple[list[str], str]:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            listed = await client.list_tools()
            found = await client.call_tool("find_booking", {"booking_id": "B1"})
            return [tool.name for tool in listed.tools], found.content[0].text

    async def bounded() -> tuple[list[str], str]:
        with anyio.fail_after(60):
            return await session()

    names, found = anyio.run(bounded)
    assert names == ["find_booking"]
    assert json.loads(found)["status"] == "confirmed"
    assert (tmp_path / "rec" / "snapshot.json").is_file()


def test_generate_with_an_unusable_sandbox_ends_in_one_line_before_any_flow_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from abstaingen.flows import generate as flow_module
    from abstaingen.sandboxes.backends import BwrapBackend

    monkeypatch.setattr(BwrapBackend, "available", staticmethod(lambda: False))
    monkeypatch.setattr(flow_module, "generate_release", lambda *args: pytest.fail("the flow must not start"))
    assert cli.main(["generate", "--sandbox", "bwrap", "--output", str(tmp_path)]) == 2
    assert_one_error_line(capsys, "'bwrap' is not usable here")


def test_a_schedule_is_a_cron_expression_or_an_interval_of_seconds(capsys: pytest.CaptureFixture[str]) -> None:
    from datetime import timedelta

    from abstaingen.errors import AbstaingenError
    from abstaingen.flows.schedule import when

    cron, said = when("0 3 * * 1", None, "Europe/Paris")
    assert (cron.cron, cron.timezone, cron.interval) == ("0 3 * * 1", "Europe/Paris", None)
    assert said == "at '0 3 * * 1' (Europe/Paris)"
    every, said = when(None, 20)
    assert (every.interval, every.cron, said) == (timedelta(seconds=20), None, "every 20 s")
    for cron_expression, seconds, message in (("61 * * * *", None, "Invalid cron string"), (None, 0.5, "--every 0.5")):
        with pytest.raises(AbstaingenError, match=message):
            when(cron_expression, seconds)
    assert cli.main(["schedule", "--every", "20", "--cron", "* * * * *"]) == 2  # one or the other
    assert "not allowed with argument" in capsys.readouterr().err
