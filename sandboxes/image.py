"""The sandbox image: Debian's Python 3.11, the pinned `mcp`, and the runtime server, nothing else.

Two ways to build it, same content and same tag:
- offline (the default, for machines that reach package registries but no image registry):
  debootstrap a minimal bookworm root file system with python3, pip-install the pinned `mcp` into
  it from the host, add the runtime server, and `docker import` the tree;
- `docker build` with `sandboxes/Dockerfile`, for machines that reach an image registry.
The tag is a content hash of what goes in (runtime server, mcp version, recipe), so a changed
runtime gets a new image and an unchanged one is never rebuilt. Releases record the image digest.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import docker
import docker.errors

from abstaingen.errors import AbstaingenError
from abstaingen.sandboxes.paths import DOCKERFILE, RUNTIME_SERVER

REPOSITORY = "abstaingen-sandbox"
SUITE = "bookworm"
RUNTIME_IN_IMAGE = "/opt/abstaingen/runtime_server.py"
SITE_PACKAGES = "usr/local/lib/python3.11/dist-packages"
RECIPE = "1"  # bump when the build steps change


def mcp_version() -> str:
    return importlib.metadata.version("mcp")


def image_tag() -> str:
    digest = hashlib.sha256()
    for part in (RECIPE, SUITE, mcp_version(), RUNTIME_SERVER.read_text(), DOCKERFILE.read_text()):
        digest.update(part.encode() + b"\0")
    return f"{REPOSITORY}:{digest.hexdigest()[:16]}"


def docker_client() -> docker.DockerClient:
    try:
        client = docker.from_env(timeout=30)
        client.ping()
    except docker.errors.DockerException as exc:
        raise AbstaingenError(f"no Docker engine answers ({exc}); start dockerd or use another sandbox") from None
    return client


def image_digest(client: docker.DockerClient, tag: str) -> str | None:
    try:
        return client.images.get(tag).id
    except docker.errors.ImageNotFound:
        return None


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise AbstaingenError(f"{what} failed ({' '.join(command[:3])} ...): {done.stderr.strip()[-800:]}")


def build_offline(client: docker.DockerClient, tag: str) -> None:
    if shutil.which("debootstrap") is None:
        raise AbstaingenError("building the sandbox image offline needs debootstrap (Debian: debootstrap)")
    with tempfile.TemporaryDirectory(prefix="abstaingen-rootfs-") as tmp:
        root = Path(tmp) / "rootfs"
        _run(["debootstrap", "--variant=minbase", "--include=python3", SUITE, str(root)], "debootstrap")
        _run([sys.executable, "-m", "pip", "install", "--quiet", "--no-compile", "--target",
              str(root / SITE_PACKAGES), f"mcp=={mcp_version()}"], "installing mcp into the image")
        runtime = root / RUNTIME_IN_IMAGE.lstrip("/")
        runtime.parent.mkdir(parents=True)
        shutil.copy(RUNTIME_SERVER, runtime)
        for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
            shutil.rmtree(root / cache, ignore_errors=True)
        archive = Path(tmp) / "rootfs.tar"
        _run(["tar", "-C", str(root), "-cf", str(archive), "."], "packing the root file system")
        repository, version = tag.split(":")
        client.api.import_image_from_file(str(archive), repository=repository, tag=version,
                                          changes=["USER 65534:65534", "WORKDIR /tmp", "ENV PYTHONDONTWRITEBYTECODE=1"])


def build_from_dockerfile(client: docker.DockerClient, tag: str) -> None:
    with tempfile.TemporaryDirectory(prefix="abstaingen-image-") as tmp:
        shutil.copy(DOCKERFILE, Path(tmp) / "Dockerfile")
        shutil.copy(RUNTIME_SERVER, Path(tmp) / "runtime_server.py")
        try:
            client.images.build(path=tmp, tag=tag, buildargs={"MCP_VERSION": mcp_version()}, rm=True)
        except docker.errors.DockerException as exc:
            raise AbstaingenError(f"docker build failed: {exc}") from None


def ensure_image(use_dockerfile: bool = False) -> tuple[str, str]:
    """(tag, digest) of the sandbox image, building it when this content has no image yet."""
    client = docker_client()
    tag = image_tag()
    if image_digest(client, tag) is None:
        (build_from_dockerfile if use_dockerfile else build_offline)(client, tag)
    digest = image_digest(client, tag)
    if digest is None:
        raise AbstaingenError(f"the sandbox image {tag} was built but cannot be found")
    return tag, digest
