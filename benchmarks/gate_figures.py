"""The label gates of published releases, side by side: per scenario, the best one-feature rule (instruction
and record, limit 0.80), the bag-of-words leakage (limit 0.70), and each baseline's paired accuracy (oracle
100%, every trivial baseline 0%). It reads what each release's manifest states; a release the gates refused
has no manifest, and is reported as refused with the reason the run printed.

    python benchmarks/gate_figures.py --seeds 101 102 103 104 105 [--output DIR]

generates the builtin release of each seed (`abstaingen generate --seed N --sandbox local`) into DIR (a
temporary folder by default) and prints one table. With release folders instead of --seeds, it only reads
them. Not a timing: it sits beside the benchmarks because it checks releases from the outside, as they do.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path


def generate(seed: int, output: Path) -> Path | str:
    """The release folder of the builtin run of `seed`, or the reason it was refused."""
    run = subprocess.run([sys.executable, "-m", "abstaingen", "generate", "--seed", str(seed), "--sandbox", "local",
                          "--output", str(output / f"seed-{seed}"), "-q"], capture_output=True, text=True)
    found = sorted((output / f"seed-{seed}").glob("*/v*/manifest.json"))
    return found[-1].parent if found else " ".join((run.stdout + run.stderr).split())[-300:]


def figures(release: Path) -> list[str]:
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    leakage = {s["scenario"]: s for s in manifest["leakage"]}
    rows = []
    for score in manifest["shortcuts"]:
        bag = leakage.get(score["scenario"], {})
        rows.append(f"  {score['scenario']}  pairs {score['pairs']:3d}  one-feature instruction "
                    f"{score['instruction_accuracy']:.2f} ({score['instruction_feature']}), record "
                    f"{score['record_accuracy']:.2f} ({score['record_feature']})  bag-of-words "
                    f"{bag.get('accuracy', float('nan')):.2f}")
    rows.append("  baselines: " + ", ".join(f"{b['agent']} {b['paired']:.0%}" for b in manifest["baselines"]))
    worst = max(max(s["instruction_accuracy"], s["record_accuracy"]) for s in manifest["shortcuts"])
    rows.append(f"  worst one-feature {worst:.2f} (limit 0.80), worst bag-of-words "
                f"{max(s['accuracy'] for s in manifest['leakage']):.2f} (limit 0.70), {manifest['total_pairs']} pairs")
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("releases", nargs="*", type=Path)
    parser.add_argument("--seeds", nargs="*", type=int, default=[])
    parser.add_argument("--output", type=Path)
    options = parser.parse_args(argv)
    refused = 0
    with tempfile.TemporaryDirectory() as scratch:
        output = options.output or Path(scratch)
        targets: list[tuple[str, Path | str]] = [(str(r), r) for r in options.releases]
        targets += [(f"seed {seed}", generate(seed, output)) for seed in options.seeds]
        for name, release in targets:
            if isinstance(release, str):
                refused += 1
                print(f"{name}: refused: {release}")
                continue
            print(f"{name}: {release}")
            print("\n".join(figures(release)))
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
