"""One digest per file of a published release, with what only says *when* and *by which commit* it was made
masked out: the run's created_at, the code version (version + git commit) and the dataset's canary GUID (new
for a dataset's first release). Two runs of the same seed on the same code must print the same digests; a
refactor that changes none of them changed no byte of what a release publishes.

    python benchmarks/release_digest.py RELEASE_DIR [RELEASE_DIR ...]

Prints `<sha256>  <path relative to the release>` per file and one `release <sha256>` line over them all;
with two or more releases, exits 1 when their digests differ. Not a timing: it sits beside the benchmarks
because it checks a release from the outside, as they do.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path


def digests(release: Path) -> dict[str, str]:
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    run_values = {manifest["canary"]: "<canary>", manifest["created_at"]: "<created_at>"}
    created_by = manifest["created_by"]  # "abstaingen <version>+<commit>"
    run_values[created_by.split(" ", 1)[1]] = "<code_version>"
    out: dict[str, str] = {}
    for path in sorted(p for p in release.rglob("*") if p.is_file()):
        text = path.read_bytes().decode("utf-8", errors="surrogateescape")
        if path.name == "manifest.json":
            data = json.loads(text)
            data.pop("files", None)  # hashes of the files, which hold the masked values
            text = json.dumps(data, sort_keys=True)
        for value, mask in run_values.items():
            text = text.replace(value, mask)
        out[str(path.relative_to(release))] = hashlib.sha256(text.encode("utf-8", errors="surrogateescape")).hexdigest()
    return out


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[-5], file=sys.stderr)
        return 2
    totals = []
    for arg in argv:
        files = digests(Path(arg))
        for name, digest in files.items():
            print(f"{digest}  {name}")
        total = hashlib.sha256("".join(f"{d}  {n}\n" for n, d in files.items()).encode()).hexdigest()
        print(f"release {total}  {arg}")
        totals.append(total)
    return 0 if len(set(totals)) == 1 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
