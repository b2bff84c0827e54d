"""Packages that only some commands need. They come with an extra of the project (pyproject's
optional-dependencies), so the default install stays small:

    llm   openai, anthropic          the llm backend, the llm judge, `models check`
    hf    datasets, huggingface_hub  `export hf --push`, decontamination against Hugging Face datasets
    inspect  inspect_ai              `abstaingen eval`

Code that needs one imports it inside the function that uses it, after `require(...)`, which turns
a missing package into one clear line naming the extra to install.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from abstaingen.errors import AbstaingenError

EXTRA_OF = {"openai": "llm", "anthropic": "llm", "pyarrow": "hf", "datasets": "hf", "huggingface_hub": "hf",
            "prefect_dask": "dask", "inspect_ai": "inspect"}

__all__ = ["EXTRA_OF", "require"]


def require(module: str, needed_by: str) -> ModuleType:
    """Import `module` (a key of EXTRA_OF) for `needed_by` (e.g. "the llm backend"), or raise an
    AbstaingenError that says which extra brings it."""
    extra = EXTRA_OF[module]
    # abstaingen is not on the index yet: a clone or a built wheel is where extras come from
    hint = f"install abstaingen with its [{extra}] extra (in a clone: pip install -e '.[{extra}]')"
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module:
            raise AbstaingenError(f"{needed_by} needs the {module} package: {hint}") from None
        # The package is there but something it imports is not: a broken install, fixed the same way.
        raise AbstaingenError(f"{needed_by} needs the {module} package, which cannot be imported ({exc}): "
                              f"{hint}") from None
