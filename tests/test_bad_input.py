"""Bad input from a user, through the command line as they meet it.

Every case ends in exactly one `abstaingen: error: ...` line and exit code 2 (or, for `release
verify`, one `FOLDER: problem` line per problem and exit code 1), without a traceback, without
touching the user's files, and before any generation work starts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from releases import publish_pairs

from abstaingen.config import apply_overrides, load_config
from abstaingen.flows import cli
from abstaingen.model import EnvironmentBundle, Release, TaskPair
from abstaingen.store import publish_release, write_bundle

PairFactory = Callable[..., TaskPair]
LONG = 100_000  # characters of user text that must never reach an error line whole


def one_error_line(capsys: pytest.CaptureFixture[str], *fragments: str) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err[:2000]
    assert lines[0].startswith("abstaingen: error: "), lines[0][:2000]
    for fragment in fragments:
        assert fragment in lines[0], lines[0][:2000]
    return lines[0]


@pytest.fixture
def no_flow(monkeypatch: pytest.MonkeyPatch) -> None:
    """The flow must not start: the pre-flight checks catch the bad input before Prefect does anything."""
    from abstaingen.flows import generate

    def generate_release(*args: object, **kwargs: object) -> None:
        pytest.fail("the generation flow started although the input was bad")

    monkeypatch.setattr(generate, "generate_release", generate_release)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --- 1. generate --output: checked before any work -----------------------------------------------


def test_output_that_is_an_existing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], no_flow: None) -> None:
    target = write(tmp_path / "results", "the user's own data\n")
    assert cli.main(["generate", "--output", str(target)]) == 2
    one_error_line(capsys, f"{target}/abstaingen-builtin: cannot create this folder: {target} is a file")
    assert target.read_text() == "the user's own data\n"


def test_output_under_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], no_flow: None) -> None:
    target = write(tmp_path / "results", "keep\n")
    assert cli.main(["generate", "--output", str(target / "deeper")]) == 2
    one_error_line(capsys, "cannot create this folder", f"{target} is a file")
    assert target.read_text() == "keep\n"


def test_output_whose_dataset_folder_is_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_flow: None
) -> None:
    write(tmp_path / "abstaingen-builtin", "keep\n")
    assert cli.main(["generate", "--output", str(tmp_path)]) == 2
    one_error_line(capsys, "abstaingen-builtin: cannot be used as a folder")


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")
def test_output_where_nothing_can_be_created(capsys: pytest.CaptureFixture[str], no_flow: None) -> None:
    # /proc refuses new folders even to root, unlike permission bits
    assert cli.main(["generate", "--output", "/proc/abstaingen-output"]) == 2
    one_error_line(capsys, "/proc/abstaingen-output/abstaingen-builtin: cannot create this folder")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through any permission bits")
def test_output_in_a_read_only_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str], no_flow: None) -> None:
    (tmp_path / "ro" / "abstaingen-builtin").mkdir(parents=True)
    (tmp_path / "ro" / "abstaingen-builtin").chmod(0o555)
    assert cli.main(["generate", "--output", str(tmp_path / "ro")]) == 2
    one_error_line(capsys, "cannot write in this folder")


def test_output_dir_with_a_nul_byte_in_the_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_flow: None
) -> None:
    config = write(tmp_path / "config.toml", '[dataset]\noutput_dir = "out\\u0000put"\n')
    assert cli.main(["generate", "--config", str(config)]) == 2
    one_error_line(capsys, "cannot create this folder: embedded null byte")


# --- 2. seeds: depth and size --------------------------------------------------------------------


def test_seed_line_nested_too_deeply(tmp_path: Path, capsys: pytest.CaptureFixture[str], no_flow: None) -> None:
    seeds = write(tmp_path / "seeds.jsonl", '{"instruction": "ok"}\n' + "[" * 100_000 + "\n")
    assert cli.main(["generate", "--seeds", str(seeds), "--output", str(tmp_path / "out")]) == 2
    one_error_line(capsys, f"{seeds}:2: JSON nested too deeply")


def test_seed_instruction_of_five_megabytes(tmp_path: Path, capsys: pytest.CaptureFixture[str], no_flow: None) -> None:
    seeds = write(tmp_path / "seeds.jsonl", json.dumps({"instruction": "x" * 5_000_000, "domain": 3}) + "\n")
    assert cli.main(["generate", "--seeds", str(seeds), "--output", str(tmp_path / "out")]) == 2
    line = one_error_line(capsys, f"{seeds}:1: line is longer than 131072 bytes")
    assert len(line) < 300


def test_seed_instruction_over_the_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str], no_flow: None) -> None:
    seeds = write(tmp_path / "seeds.jsonl", json.dumps({"instruction": "x" * 20_000}) + "\n")
    assert cli.main(["generate", "--seeds", str(seeds), "--output", str(tmp_path / "out")]) == 2
    line = one_error_line(capsys, f"{seeds}:1: instruction: string should have at most 16384 characters")
    assert len(line) < 300


def test_seed_with_a_long_unknown_domain(tmp_path: Path, capsys: pytest.CaptureFixture[str], no_flow: None) -> None:
    seeds = write(tmp_path / "seeds.jsonl", json.dumps({"instruction": "ok", "domain": "d" * LONG}) + "\n")
    assert cli.main(["generate", "--seeds", str(seeds), "--output", str(tmp_path / "out")]) == 2
    assert len(one_error_line(capsys, ":1: domain: unknown domain 'ddd")) < 400


def test_long_unknown_domain_option(tmp_path: Path, capsys: pytest.CaptureFixture[str], no_flow: None) -> None:
    assert cli.main(["generate", "--domains", "travel," + "m" * LONG, "--output", str(tmp_path)]) == 2
    assert len(one_error_line(capsys, "--domains: invalid domain name 'mmm")) < 400


def test_long_dataset_name_and_key(tmp_path: Path, capsys: pytest.CaptureFixture[str], no_flow: None) -> None:
    config = write(tmp_path / "config.toml", f'[dataset]\nname = "{"N" * LONG}"\n{"k" * LONG} = 1\n')
    assert cli.main(["generate", "--config", str(config)]) == 2
    assert len(one_error_line(capsys, "dataset.name: invalid dataset name 'NNN", "unknown key")) < 800


def test_toml_nested_too_deeply(tmp_path: Path, capsys: pytest.CaptureFixture[str], no_flow: None) -> None:
    config = write(tmp_path / "config.toml", "x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert cli.main(["generate", "--config", str(config)]) == 2
    one_error_line(capsys, "malformed TOML: arrays or tables nested too deeply")


def test_oversized_config_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], no_flow: None) -> None:
    # the cap also stops an endless file such as /dev/zero (not used here: a regression would fill memory)
    config = write(tmp_path / "config.toml", "# " + "x" * 3_000_000 + "\n")
    assert cli.main(["generate", "--config", str(config)]) == 2
    one_error_line(capsys, "config.toml: config file is larger than 1048576 bytes")


# --- 3. the sandbox keys are strict --------------------------------------------------------------


@pytest.mark.parametrize("value", ['"yes"', "1"])
def test_allow_unsandboxed_needs_a_boolean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_flow: None, value: str
) -> None:
    config = write(tmp_path / "config.toml", f"[sandbox]\nallow_unsandboxed = {value}\n")
    assert cli.main(["generate", "--config", str(config)]) == 2
    one_error_line(capsys, "sandbox.allow_unsandboxed: input should be a valid boolean")


@pytest.mark.parametrize(("value", "problem"), [("inf", "finite number"), ("nan", "finite number"),
                                                ("1e12", "less than or equal to 3600")])
def test_call_timeout_must_be_finite_and_bounded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_flow: None, value: str, problem: str
) -> None:
    config = write(tmp_path / "config.toml", f"[sandbox]\ncall_timeout_s = {value}\n")
    assert cli.main(["generate", "--config", str(config)]) == 2
    one_error_line(capsys, "sandbox.call_timeout_s:", problem)


# --- 4. release verify on a real release ---------------------------------------------------------

CONFIG = '[generation]\ndomains = ["travel"]\nvariants_per_scenario = 1\n[sandbox]\nbackend = "local"\n'
SEEDS = '{"instruction": "Cancel my hotel booking and rebook my flight", "domain": "travel"}\n'


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two releases of one dataset, made as `abstaingen generate --config config.toml --output out [--seeds
    seeds.jsonl]` makes them (the flow's composition, without Prefect): v1 from the default seeds, v2 from a
    seeds file."""
    workdir = tmp_path_factory.mktemp("generated")
    write(workdir / "config.toml", CONFIG)
    write(workdir / "seeds.jsonl", SEEDS)
    config = apply_overrides(load_config(workdir / "config.toml"), output_dir=workdir / "out")
    for seeds in (None, workdir / "seeds.jsonl"):
        publish_pairs(config, seeds)
    return workdir


@pytest.fixture
def release(generated: Path, tmp_path: Path) -> Path:
    """A copy of v1 to change."""
    copy = tmp_path / "abstaingen-builtin" / "v1"
    shutil.copytree(generated / "out" / "abstaingen-builtin" / "v1", copy)
    return copy


def verify(capsys: pytest.CaptureFixture[str], folder: Path, *extra: str) -> tuple[int, list[str]]:
    code = cli.main(["release", "verify", str(folder), *extra])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    lines = captured.out.splitlines()
    assert all(line.startswith(f"{folder}: ") for line in lines), captured.out
    return code, [line.removeprefix(f"{folder}: ") for line in lines]


def edit_manifest(folder: Path, change: Callable[[dict], None]) -> None:
    manifest = json.loads((folder / "manifest.json").read_text())
    change(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2))


@pytest.mark.component
def test_a_fresh_release_verifies_and_its_funnel_ends_in_its_pairs(
    generated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for version in ("v1", "v2"):
        folder = generated / "out" / "abstaingen-builtin" / version
        manifest = Release.model_validate_json((folder / "manifest.json").read_text())
        assert manifest.funnel[-1].passed == manifest.total_pairs > 0
        assert len(manifest.baselines) == 4
        assert verify(capsys, folder) == (0, ["OK"])


def test_verify_without_config_says_the_fingerprint_was_not_checked(
    release: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["release", "verify", str(release)]) == 0
    err = capsys.readouterr().err
    assert "config_fingerprint not checked" in err and "--config" in err


def test_verify_recomputes_the_fingerprint_from_the_config_and_default_seeds(
    generated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    v1 = generated / "out" / "abstaingen-builtin" / "v1"
    assert verify(capsys, v1, "--config", str(generated / "config.toml")) == (0, ["OK"])
    # the same config with another seed is not what made the release
    other = write(generated / "other.toml", CONFIG.replace("[generation]", "[dataset]\nseed = 8\n[generation]"))
    code, lines = verify(capsys, v1, "--config", str(other))
    assert code == 1
    assert len(lines) == 1 and lines[0].startswith("manifest.json: config_fingerprint ")
    assert "does not match the config and seeds given" in lines[0]


def test_verify_recomputes_the_fingerprint_from_a_seeds_file(
    generated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    v2 = generated / "out" / "abstaingen-builtin" / "v2"
    config = str(generated / "config.toml")
    assert verify(capsys, v2, "--config", config, "--seeds", str(generated / "seeds.jsonl")) == (0, ["OK"])
    code, lines = verify(capsys, v2, "--config", config)  # without them: the default seeds, another fingerprint
    assert code == 1 and "config_fingerprint" in lines[0]


def test_verify_seeds_need_config(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["release", "verify", str(release), "--seeds", str(write(tmp_path / "s.jsonl", SEEDS))]) == 2
    one_error_line(capsys, "--seeds needs --config")


def test_verify_reports_edited_baseline_metrics(release: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def lie(manifest: dict) -> None:
        oracle = next(m for m in manifest["baselines"] if m["agent"] == "always_act")
        oracle["paired"] = 0.75
        oracle["abstain"] = 0.5

    edit_manifest(release, lie)
    code, lines = verify(capsys, release)
    assert code == 1
    assert lines == ["manifest.json: baseline 'always_act' does not match the scores in pairs.jsonl: "
                     "abstain 0.5 (recomputed: 0.0), paired 0.75 (recomputed: 0.0)"]


def test_verify_reports_an_edited_agentabstain_view(release: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def lie(manifest: dict) -> None:
        view = next(v for v in manifest["agentabstain_view"] if v["agent"] == "do_nothing")
        view["paired"] = 0.5

    edit_manifest(release, lie)
    assert verify(capsys, release) == (1, ["manifest.json: the AgentAbstain view of 'do_nothing' does not match the "
                                           "scores in pairs.jsonl"])


def test_verify_reports_a_dropped_baseline(release: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit_manifest(release, lambda m: m["baselines"].pop(0))
    assert verify(capsys, release) == (1, ["manifest.json: baseline 'oracle' has scores in pairs.jsonl but no metrics"])


def test_verify_reports_an_edited_funnel(release: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def lie(manifest: dict) -> None:
        manifest["funnel"][-1]["passed"] += 5
        manifest["funnel"][-1]["received"] += 5

    edit_manifest(release, lie)
    code, lines = verify(capsys, release)
    assert code == 1 and len(lines) == 1 and "the funnel's last stage passed" in lines[0]


def test_verify_reports_an_edited_sandbox(release: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit_manifest(release, lambda m: m.update(sandbox="docker", sandbox_image="sha256:" + "0" * 64))
    code, lines = verify(capsys, release)
    assert code == 1
    assert lines[0] == "manifest.json: sandbox 'docker', but the pairs ran in 'local'"
    assert lines[1].startswith("manifest.json: sandbox_image 'sha256:000")


def test_verify_refuses_a_manifest_path_outside_the_release(
    release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = write(tmp_path / "secret.txt", "outside\n")
    entry = {"path": "../../secret.txt", "sha256": "0" * 64, "bytes": 8}
    edit_manifest(release, lambda m: m["files"].append(entry))
    code, lines = verify(capsys, release)
    assert code == 1
    assert lines == ["../../secret.txt: the manifest lists a path that is not inside the release (absolute, '..', "
                     "'.' or empty parts); it was not opened"]
    assert secret.read_text() == "outside\n"


def test_verify_refuses_links_in_the_release(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    [env] = list((release / "environments").iterdir())
    shutil.move(env, tmp_path / "moved")
    env.symlink_to(tmp_path / "moved", target_is_directory=True)
    code, lines = verify(capsys, release)
    assert (code, lines) == (1, [f"environments/{env.name}: is a symbolic link; a release holds only regular files"])


# --- 5. env serve --------------------------------------------------------------------------------


@pytest.fixture
def bundle_dir(tmp_path: Path, tiny_bundle: EnvironmentBundle) -> Path:
    write_bundle(tiny_bundle, tmp_path / "bundle")
    return tmp_path / "bundle"


def serve(bundle_dir: Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "abstaingen", "env", "serve", str(bundle_dir), "--sandbox", "local",
                           "--allow-unsandboxed"],  # a hand-made bundle: not the builtin generator's code
                          capture_output=True, text=True, timeout=60, **kwargs)  # type: ignore[call-overload]


@pytest.mark.component
def test_serve_with_stdin_from_dev_null_ends_at_once(bundle_dir: Path) -> None:
    """/dev/null is an MCP client that closed its end: the server stops cleanly (exit 0), as it does
    when a client closes the pipe. It used to print a traceback and wait forever."""
    result = serve(bundle_dir, stdin=subprocess.DEVNULL)
    assert result.returncode == 0
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) <= 1, result.stderr
    assert result.stdout == ""


@pytest.mark.component
def test_serve_answers_requests_from_a_file(bundle_dir: Path, tmp_path: Path) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    requests = write(tmp_path / "requests.jsonl", json.dumps(request) + "\n")
    with requests.open("rb") as stdin:
        result = serve(bundle_dir, stdin=stdin)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert json.loads(result.stdout.splitlines()[0])["id"] == 1


@pytest.mark.component
def test_serve_with_stdin_closed(bundle_dir: Path) -> None:
    result = serve(bundle_dir, stdin=subprocess.DEVNULL, preexec_fn=lambda: os.close(0))
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "abstaingen: error: env serve: stdin is closed; an MCP client talks to the server over stdin and stdout")


@pytest.fixture
def no_exec(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "_exec_server", lambda params: pytest.fail("the server must not start"))


def test_serve_record_that_is_a_file(
    bundle_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_exec: None
) -> None:
    record = write(tmp_path / "log", "earlier log\n")
    assert cli.main(["env", "serve", str(bundle_dir), "--sandbox", "local", "--allow-unsandboxed",
                     "--record", str(record)]) == 2
    one_error_line(capsys, f"--record {record}: cannot be used as a folder")
    assert record.read_text() == "earlier log\n"


def test_serve_long_unknown_task_id(
    bundle_dir: Path, tmp_path: Path, make_pair: PairFactory, capsys: pytest.CaptureFixture[str], no_exec: None
) -> None:
    pairs = write(tmp_path / "pairs.jsonl", make_pair(1).model_dump_json() + "\n")
    assert cli.main(["env", "serve", str(bundle_dir), "--task", str(pairs), "--task-id", "t" * LONG]) == 2
    assert len(one_error_line(capsys, "no task with task_id 'ttt")) < 400


# --- 6. audit-sample and audit-score -------------------------------------------------------------


@pytest.fixture
def small_release(tmp_path: Path, tiny_bundle: EnvironmentBundle, make_pair: PairFactory) -> Path:
    draft = Release(name="demo", version="", created_by="t", config_fingerprint="0" * 64, sandbox="local",
                    counts={}, total_pairs=0, funnel=[])
    publish_release(tmp_path / "releases", draft, [make_pair(1), make_pair(2)], [tiny_bundle])
    return tmp_path / "releases" / "demo" / "v1"


def test_audit_sample_output_that_is_a_file(
    small_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = write(tmp_path / "sheets", "keep\n")
    assert cli.main(["release", "audit-sample", str(small_release), "--output", str(target)]) == 2
    one_error_line(capsys, f"--output {target}: cannot be used as a folder")
    assert target.read_text() == "keep\n"


def test_audit_sample_keeps_a_manifest_name_from_leaving_the_output_folder(
    small_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit_manifest(small_release, lambda m: m.update(name="../../escaped"))
    out = tmp_path / "sheets"
    assert cli.main(["release", "audit-sample", str(small_release), "--output", str(out)]) == 0
    assert sorted(p.suffix for p in out.iterdir()) == [".csv", ".html"]
    assert not list(tmp_path.glob("escaped*"))


def test_audit_score_with_a_long_unknown_pair_id(
    small_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sheet = write(tmp_path / "sheet.csv", "pair_id,t_plus_valid,t_minus_valid,minimal,natural\n"
                                          f"{'p' * LONG},y,y,y,y\n")
    assert cli.main(["release", "audit-score", str(small_release), str(sheet)]) == 2
    assert len(one_error_line(capsys, "sheet.csv:2: 'ppp", "is not a pair of this release")) < 400


SEEDS_REACH_THE_FLOW = """
import sys
from pathlib import Path
from abstaingen.config import GenerateConfig
import abstaingen.flows.generate as generate

async def count_seeds(plan, probe):  # the real flow run, Prefect and all, minus the work
    seeds = plan.seeds
    return generate.GenerationResult(outcome="refused",
                                     refusal=f"{len(seeds)} seeds, {sum(len(s.instruction) for s in seeds)} characters")

generate._generate_release = count_seeds
print("release refused, nothing was published:", generate.run_generate_flow(GenerateConfig(), Path(sys.argv[1])).refusal)
"""


@pytest.mark.flow
def test_seeds_of_any_total_size_reach_the_flow(tmp_path: Path) -> None:
    """Seeds travel to the flow as a file: 36 seeds of 16,000 characters (560 KB, beyond the 512 KiB
    Prefect takes as flow parameters) reach a real flow run whole. The run's work is left out."""
    from abstaingen.generators.builtin import DOMAIN_NAMES

    seeds = tmp_path / "seeds.jsonl"
    filler = " Keep every record of the customer in order." * 400
    seeds.write_text("".join(json.dumps({"instruction": f"Help customer {n} with their account.{filler}"[:16000],
                                         "domain": DOMAIN_NAMES[n % len(DOMAIN_NAMES)]}) + "\n" for n in range(36)))
    assert seeds.stat().st_size > 512 * 1024
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    # what the CLI sets before Prefect loads (this script calls the flow without the CLI): with analytics
    # on, the ephemeral server's telemetry write can race its first migration ("database is locked")
    env.update(PREFECT_HOME=str(tmp_path / "prefect-home"), PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="1",
               PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="180")
    run = subprocess.run([sys.executable, "-c", SEEDS_REACH_THE_FLOW, str(seeds)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert "release refused, nothing was published: 36 seeds, 576000 characters" in run.stdout, run.stderr[-3000:]


PUBLISH_INTO = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from builtin_fixtures import builtin_bundle, builtin_pair
from abstaingen.errors import HostError
from abstaingen.model import FunnelStage, Release, Scenario
from abstaingen.store import publish_release
pairs = [builtin_pair(Scenario.S1)]
draft = Release(name="demo", version="", created_by="test", config_fingerprint="f" * 64, sandbox="local",
                counts={}, total_pairs=0, seed=1, funnel=[FunnelStage(stage="task", received=1, passed=1)])
try:
    publish_release(Path(sys.argv[1]), draft, pairs, [builtin_bundle("travel")])
except HostError as exc:
    print(f"HostError: {exc}")
"""


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root to mount a small tmpfs")
@pytest.mark.parametrize(("mount", "reason"), [("-t tmpfs -o size=4k tmpfs", "No space left on device"),
                                               ("-t tmpfs -o ro tmpfs", "Read-only file system")])
def test_a_full_or_read_only_output_is_one_line_and_leaves_nothing(tmp_path: Path, mount: str, reason: str) -> None:
    """The machine's failures are not the user's input: one HostError line (the CLI exits 1 on it), and no
    staging folder is left behind. The tmpfs lives in a mount namespace of the test's own."""
    out = tmp_path / "out"
    out.mkdir()
    script = write(tmp_path / "publish.py", PUBLISH_INTO)
    tests = Path(__file__).parent
    shell = f"mount {mount} {out} && {sys.executable} {script} {out} {tests} && ls -A {out} {out}/demo 2>/dev/null"
    run = subprocess.run(["unshare", "-m", "sh", "-c", shell], capture_output=True, text=True, timeout=120)
    lines = run.stdout.splitlines()
    assert lines[:1] == [f"HostError: {out}/demo: cannot publish ({reason})"], run.stdout + run.stderr
    assert not [line for line in lines[1:] if line.startswith(".staging-") or line.startswith("v")], lines


def test_a_host_error_exits_1_and_bad_input_2(capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from abstaingen.errors import AbstaingenError, HostError

    for error, code in ((HostError("out: cannot publish (No space left on device)"), 1),
                        (AbstaingenError("config.toml: no such key"), 2)):
        def fail(_options: object, error: Exception = error) -> int:
            raise error
        monkeypatch.setattr(cli, "run_verify_command", fail)
        assert cli.main(["release", "verify", "x"]) == code
        assert capsys.readouterr().err == f"abstaingen: error: {error}\n"
