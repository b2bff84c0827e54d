"""How much an install of abstaingen puts on disk: the default install and each extra, in a fresh venv.

    python benchmarks/install_size.py [--extras "" hf llm all] [--keep DIR]

Each install goes into a venv of its own (from this clone, not editable, with the index pip is set up
to use) and is measured as the size of its site-packages; the largest distributions are listed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def measure(extra: str, where: Path) -> tuple[int, list[tuple[int, str]]]:
    venv = where / (extra or "default")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    target = f"{ROOT}[{extra}]" if extra else str(ROOT)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", target], check=True)
    [site] = (venv / "lib").glob("python3*/site-packages")
    parts = sorted(((size(p), p.name) for p in site.iterdir() if p.is_dir() and not p.name.endswith(".dist-info")),
                   reverse=True)
    return size(site), parts[:5]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extras", nargs="*", default=["", "hf"], help='extras to measure; "" is the default install')
    parser.add_argument("--keep", type=Path, help="build the venvs here and keep them")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        where = options.keep or Path(scratch)
        where.mkdir(parents=True, exist_ok=True)
        for extra in options.extras:
            total, largest = measure(extra, where)
            print(f"{extra or 'default':8s} {total / 2**20:7.0f} MiB   largest: "
                  + ", ".join(f"{name} {n / 2**20:.0f}" for n, name in largest))


if __name__ == "__main__":
    main()
