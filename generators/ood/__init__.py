"""The stages of the out-of-scope (OOD) dataset behind one protocol, one implementation per backend,
registered by name, like the task-pair generators next door (abstaingen.generators):

    in-scope questions   role                        -> multiple-choice questions it should serve
    translation          bank question x language    -> the same question in that language
    relatedness gate     a question's versions x role -> how close each is to the role's scope
    framing              question x role             -> the question wrapped in the role's workflow
    consistency check    question x framed message   -> whether the message still asks that question

`[ood] backend` picks the backend. The pipeline (abstaingen.ood.pipeline) knows only `OodGenerator`.
See generators/ood/README.md for adding a backend or a role.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from abstaingen.errors import AbstaingenError
from abstaingen.model.ood import ConsistencyCheck, FramedQuery, Question, Relatedness, RolePolicy
from abstaingen.model.release import GenerationReport

if TYPE_CHECKING:
    from abstaingen.config import GenerateConfig


class OodGenerator(Protocol):
    name: str
    relatedness_threshold: float

    async def write_id_questions(self, role: RolePolicy, count: int, seed: int) -> list[Question]:
        """`count` in-scope questions of the role, each in every language of the role's texts."""
        ...

    async def translate(self, question: Question, language: str) -> Question:
        """The question in `language`: same question_id, options in the same order, same answer.
        Raises ItemLost when the backend cannot."""
        ...

    async def rate_relatedness(self, versions: list[Question], role: RolePolicy) -> list[Relatedness]:
        """One score per version (language) of a bank question; at or above `relatedness_threshold` the
        question is too close to the role to count as off-topic."""
        ...

    async def frame(self, question: Question, role: RolePolicy, seed: int) -> FramedQuery:
        """The question wrapped in the role's workflow, in the question's language, the question block
        (abstaingen.validators.ood.question_block) kept verbatim."""
        ...

    async def check_consistency(self, question: Question, framed: FramedQuery, role: RolePolicy) -> ConsistencyCheck:
        """Whether the framed message still asks the same question with the same options and answer."""
        ...

    def report(self) -> GenerationReport:
        ...

    async def aclose(self) -> None:
        ...


Factory = Callable[["GenerateConfig"], OodGenerator]
OOD_GENERATORS: dict[str, Factory] = {}


def register_ood_generator(name: str) -> Callable[[Factory], Factory]:
    def register(factory: Factory) -> Factory:
        OOD_GENERATORS[name] = factory
        return factory
    return register


def make_ood_generator(name: str, config: GenerateConfig) -> OodGenerator:
    import abstaingen.generators.ood.builtin.stages  # noqa: F401  (registers the builtin backend)
    import abstaingen.generators.ood.llm.stages  # noqa: F401  (and the llm one)

    if name not in OOD_GENERATORS:
        raise AbstaingenError(f"unknown OOD backend {name!r} (available: {', '.join(sorted(OOD_GENERATORS))})")
    return OOD_GENERATORS[name](config)


__all__ = ["OOD_GENERATORS", "OodGenerator", "make_ood_generator", "register_ood_generator"]
