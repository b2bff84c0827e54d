"""Which sandbox backends tests run on. A backend this machine lacks is skipped, unless it is named
in ABSTAINGEN_REQUIRE_SANDBOXES (CI sets it): then its tests run, and fail if it is missing."""

from __future__ import annotations

import os

import pytest

from abstaingen.sandboxes.backends import BwrapBackend, DockerBackend

REQUIRED = {name for name in os.environ.get("ABSTAINGEN_REQUIRE_SANDBOXES", "").split(",") if name}


def usable(name: str) -> bool:
    return name in REQUIRED or {"bwrap": BwrapBackend, "docker": DockerBackend}[name].available()


BWRAP = pytest.param("bwrap", marks=pytest.mark.skipif(not usable("bwrap"), reason="bubblewrap is not installed"))
DOCKER = pytest.param("docker", marks=pytest.mark.skipif(not usable("docker"),
                                                         reason="no Docker engine with the sandbox image"))
ISOLATED = [BWRAP, DOCKER]
ALL = ["local", *ISOLATED]
