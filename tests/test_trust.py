"""Trust from content: only the builtin generator's own implementations run outside an isolating sandbox."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from builtin_fixtures import builtin_bundle

from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.generators.builtin.environment import implementation_source
from abstaingen.sandboxes.backends import get_backend
from abstaingen.sandboxes.trust import PINNED, untrusted, written_by_abstaingen
from abstaingen.validators.validate import check_sandbox_policy


def test_the_pinned_hashes_are_the_builtin_generator_s() -> None:
    """Changing a builtin domain's code changes its hash: rewrite the file with what this test prints."""
    current = {name: hashlib.sha256(implementation_source(bp).encode()).hexdigest() for name, bp in sorted(DOMAINS.items())}
    assert json.loads(PINNED.read_text()) == current, json.dumps(current, indent=2)


@pytest.mark.parametrize("domain", ["travel", "banking"])
def test_a_builtin_bundle_is_trusted_for_every_seed(domain: str) -> None:
    assert written_by_abstaingen(builtin_bundle(domain, seed=3)) and written_by_abstaingen(builtin_bundle(domain, seed=4))


def test_hostile_code_labelled_builtin_is_untrusted() -> None:
    """A release can rewrite its own `origin`; the code's hash decides."""
    bundle = builtin_bundle("travel")
    lying = bundle.model_copy(update={"implementation": bundle.implementation + "\nimport os\n"})
    assert lying.origin == "builtin"
    assert not written_by_abstaingen(lying) and untrusted([bundle, lying]) == [lying.env_id]
    refused = check_sandbox_policy(lying, get_backend("local"), allow_unsandboxed=False)
    assert not refused.passed and "did not write" in refused.detail
    assert check_sandbox_policy(bundle, get_backend("local"), allow_unsandboxed=False).passed


def test_env_serve_refuses_a_lying_bundle_on_the_local_backend(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from abstaingen.flows import cli
    from abstaingen.store import write_bundle

    monkeypatch.setattr(cli, "_exec_server", lambda params: pytest.fail("it would have served the code"))
    bundle = builtin_bundle("travel")
    write_bundle(bundle.model_copy(update={"implementation": bundle.implementation + "\nimport os\n"}), tmp_path / "b")
    assert cli.main(["env", "serve", str(tmp_path / "b"), "--sandbox", "local"]) == 2
    assert "holds code abstaingen did not write (origin builtin)" in capsys.readouterr().err
