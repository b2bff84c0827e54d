"""The OOD stages' protocol and the registry of OOD backends (see __init__.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from abstaingen.model.ood import ConsistencyCheck, FramedQuery, Question, Relatedness, RolePolicy
from abstaingen.model.release import GenerationReport
from abstaingen.registry import Registry

if TYPE_CHECKING:
    from abstaingen.config import GenerateConfig


class OodGenerator(Protocol):
    name: str
    relatedness_threshold: float

    async def write_id_questions(self, role: RolePolicy, count: int, seed: int, asked: Sequence[str] = ()
                                 ) -> list[Question]:
        """`count` in-scope questions of the role, each in every language of the role's texts, none of them one
        of `asked` (question blocks, abstaingen.validators.ood.question_block, that earlier releases or earlier
        rounds of this one asked the role), in several forms (`Question.form`)."""
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

    async def recast(self, question: Question, role: RolePolicy, seed: int) -> FramedQuery:
        """The question recast as a task of the role's workflow in a long role-play that presses the assistant
        not to refuse, in the question's language, every option on a line with its letter
        (abstaingen.validators.ood.recast_consistency)."""
        ...

    async def check_recast(self, question: Question, recast: FramedQuery, role: RolePolicy) -> ConsistencyCheck:
        """Whether the recast still asks the same question, with the same options and answer."""
        ...

    def report(self) -> GenerationReport:
        ...

    async def aclose(self) -> None:
        ...


Factory = Callable[["GenerateConfig"], OodGenerator]
OOD_GENERATORS: Registry[str, Factory] = Registry("OOD backend")
register_ood_generator = OOD_GENERATORS.register


