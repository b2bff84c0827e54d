"""Prompt templates for the llm backend (Jinja2), one per stage, plus `repair`.

A template has two blocks, `system` and `user`; shared text lives in templates they include. Rendering is strict: a variable the caller did not
give is an error, not an empty string. Each rendered prompt carries the hash of its template's text,
which goes into the provenance of what it produced, so a release says which prompt wrote it.
"""

from __future__ import annotations

import hashlib
import re
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from abstaingen.model.common import Model

FOLDER = Path(__file__).parent


class RenderedPrompt(Model):
    template: str
    template_hash: str
    system: str
    user: str


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(FOLDER), undefined=jinja2.StrictUndefined,
                              auto_reload=False, autoescape=False, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False)


_USES = re.compile(r"""{%-?\s*(?:include|extends|import|from)\s+["']([^"']+)\.j2["']""")


@cache
def template_hash(name: str) -> str:
    """The hash of the template's text and of every template it includes: editing a shared part
    changes the hash of each prompt that shows it. Read once per process, like the templates
    themselves (every model call renders one)."""
    text = (FOLDER / f"{name}.j2").read_text(encoding="utf-8")
    used = "".join(template_hash(part) for part in sorted(set(_USES.findall(text))))
    return hashlib.sha256((text + used).encode()).hexdigest()


def render(name: str, **values: Any) -> RenderedPrompt:
    template = _environment().get_template(f"{name}.j2")
    context = template.new_context(values)
    blocks = {block: "".join(template.blocks[block](context)).strip() for block in ("system", "user")}
    return RenderedPrompt(template=name, template_hash=template_hash(name), **blocks)
