"""Prompt templates for the llm backend (Jinja2), one per stage, plus `repair`.

A template has two blocks, `system` and `user`. Rendering is strict: a variable the caller did not
give is an error, not an empty string. Each rendered prompt carries the hash of its template's text,
which goes into the provenance of what it produced, so a release says which prompt wrote it.
"""

from __future__ import annotations

import hashlib
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
                              autoescape=False, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False)


def template_hash(name: str) -> str:
    return hashlib.sha256((FOLDER / f"{name}.j2").read_bytes()).hexdigest()


def render(name: str, **values: Any) -> RenderedPrompt:
    template = _environment().get_template(f"{name}.j2")
    context = template.new_context(values)
    blocks = {block: "".join(template.blocks[block](context)).strip() for block in ("system", "user")}
    return RenderedPrompt(template=name, template_hash=template_hash(name), **blocks)
