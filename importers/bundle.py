"""`bundle`: a folder in abstaingen's own bundle format (environment.json, implementation.py), from anyone.

Whatever its `origin` says, the bundle comes in as imported: its code is untrusted (sandboxes/trust.py).
"""

from __future__ import annotations

from pathlib import Path

from abstaingen.importers.base import ImportOptions, env_id_for, importer, source_of
from abstaingen.model import EnvironmentBundle
from abstaingen.store import ENVIRONMENT_FILE, IMPLEMENTATION_FILE, read_bundle


@importer("bundle")
def import_bundle(root: Path, options: ImportOptions) -> EnvironmentBundle:
    bundle = read_bundle(root)
    source = source_of("bundle", root, [root / ENVIRONMENT_FILE, root / IMPLEMENTATION_FILE], options)
    return bundle.model_copy(update={"origin": "imported", "source": source, "written_by": {},
                                     "env_id": env_id_for(bundle.domain, source)})
