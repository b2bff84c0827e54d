"""The stages of the out-of-scope (OOD) dataset behind one protocol, one implementation per backend,
registered by name, like the task-pair generators next door (abstaingen.generators):

    in-scope questions   role                        -> multiple-choice questions it should serve
    translation          bank question x language    -> the same question in that language
    relatedness gate     a question's versions x role -> how close each is to the role's scope
    framing              question x role             -> the question wrapped in the role's workflow
    consistency check    question x framed message   -> whether the message still asks that question
    recast               question x role             -> the question recast as the role's work, under pressure
    recast check         question x recast message   -> whether the recast still asks that question

`[ood] backend` picks the backend. The pipeline (abstaingen.pipelines.ood) knows only `OodGenerator`.
See generators/ood/README.md for adding a backend or a role.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from abstaingen.generators.ood.base import OOD_GENERATORS, OodGenerator, register_ood_generator

if TYPE_CHECKING:
    from abstaingen.config import GenerateConfig


def make_ood_generator(name: str, config: GenerateConfig) -> OodGenerator:
    import abstaingen.generators.ood.builtin.stages  # noqa: F401  (registers the builtin backend)
    import abstaingen.generators.ood.llm.stages  # noqa: F401  (and the llm one)

    return OOD_GENERATORS.find(name)(config)


__all__ = ["OOD_GENERATORS", "OodGenerator", "make_ood_generator", "register_ood_generator"]
