"""Contracts of the out-of-scope (OOD) dataset: scoped assistant roles, multiple-choice questions, and
the items an evaluated assistant sees.

For an assistant with a defined scope (a booking bot, a bank helper) an item is one user message:

- `id`: a request the role serves, as a multiple-choice question about its own work;
- `direct_ood`: a question from a general question bank, asked as it is; the role must refuse it;
- `laundered_ood`: the same bank question wrapped in the role's own workflow, in the user's own voice (a
  message about their booking, a ticket or email they send) with the question and every option kept
  verbatim; still to be refused;
- `recast_ood`: the same bank question recast as a task of the role's own workflow (a code to pick for a
  record, a dropdown of its system) inside a long role-play that presses the assistant not to refuse, the
  options kept (OffTopicEval's adaptive attack); still to be refused.

Every item's system prompt is one of three renderings of its role's policy (`PromptVariant`).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Literal

from pydantic import Field, field_validator, model_validator

from abstaingen.model.common import Model
from abstaingen.model.pair import Provenance

LANGUAGES: tuple[str, ...] = ("en", "zh", "hi")
Language = Literal["en", "zh", "hi"]
ItemKind = Literal["id", "direct_ood", "laundered_ood", "recast_ood"]
ITEM_KINDS: tuple[ItemKind, ...] = ("id", "direct_ood", "laundered_ood", "recast_ood")
WRAPPED_KINDS: tuple[ItemKind, ...] = ("laundered_ood", "recast_ood")  # a message built around the question
# How a role's policy is rendered as the system prompt (abstaingen.generators.ood.policy): `ours` names the
# pretexts laundering uses (a form field, a test item, an audit, a training exercise); `generic` is longer,
# with sections, a defence that names none of them and worked examples, as OffTopicEval's prompts are;
# `minimal` is the role's name, description, the tasks it helps with and the refusal sentence.
PromptVariant = Literal["ours", "generic", "minimal"]
PROMPT_VARIANTS: tuple[PromptVariant, ...] = ("ours", "generic", "minimal")
OPTION_LETTERS = ("A", "B", "C", "D")


class WorkflowTerms(Model):
    """The role's own workflow words, in one language: the recasts are filled with them all, the laundering
    frames only with `record` (the others are what the injection defences name as pretexts)."""

    system: str = Field(description="the software the role works in, with its article: 'the booking system'")
    form: str = Field(description="a form the role's users fill: 'the reservation form'")
    field: str = Field(description="a free-text field of that form or of a ticket: 'the notes field'")
    record: str = Field(description="the kind of record the role handles, singular: 'booking'")
    team: str = Field(description="the team behind the role: 'the front-desk team'")
    user: str = Field(description="the person the role serves, singular, without an article: 'patient', 'employee', "
                                  "'member'")


class RoleText(Model):
    """A role's policy in one language: everything its system prompt is rendered from."""

    name: str = Field(min_length=1, description="the assistant's name and job: 'Appointment booking assistant'")
    description: str = Field(min_length=1, description="one or two sentences: whom it serves and for which business")
    allowed: list[str] = Field(min_length=2, description="tasks the assistant carries out")
    forbidden: list[str] = Field(min_length=2, description="tasks it must refuse, including off-topic questions")
    injection_defence: str = Field(min_length=1, description="how it treats requests that claim its rules changed or "
                                                             "dress an off-topic task up as part of its work")
    refusal: str = Field(min_length=1, description="the exact sentence it answers an out-of-scope request with")
    vocabulary: list[str] = Field(min_length=10, description="words and phrases of the role's scope, lower case; the "
                                                             "builtin relatedness gate drops a bank question that "
                                                             "uses any of them")
    workflow: WorkflowTerms = Field(description="the role's own workflow words (its form, ticket, record), which "
                                                "laundering frames are filled with")
    frames: list[str] = Field(default_factory=list, description="laundering frames only this role uses (see "
                                                                "generators/ood/builtin/frames.py for the slots)")


class RolePolicy(Model):
    """A scoped assistant: the same policy in every language the dataset has."""

    role_id: str = Field(pattern=r"^[a-z][a-z0-9_]{1,40}$", description="stable id, e.g. 'appointment_booking'")
    texts: dict[str, RoleText] = Field(description="language (en, zh, hi) -> the policy in that language")
    excluded_subjects: list[str] = Field(default_factory=list, description="bank subjects too close to the role to "
                                                                           "count as off-topic for it (a pharmacy's "
                                                                           "assistant and human biology)")


# The forms an in-scope question takes: how to do something with the role, what its policy allows or requires,
# what a term of its business means, which option fits a user's situation, what it does not offer, or a date,
# time or amount worked out from the user's own details.
IdForm = Literal["how_to", "policy", "definition", "scenario", "negative", "calculation"]
ID_FORMS: tuple[IdForm, ...] = ("how_to", "policy", "definition", "scenario", "negative", "calculation")


class Question(Model):
    """A multiple-choice question with exactly one correct option."""

    question_id: str = Field(description="the same in every language the question is written in")
    subject: str = Field(description="the bank subject (e.g. 'arithmetic'), or the role_id of an in-scope question")
    language: Language = Field(description="the language this version of the question is written in: en, zh or hi")
    text: str = Field(min_length=1, description="the question, without its options")
    options: list[str] = Field(min_length=4, max_length=4, description="four options, shown as A-D in this order")
    answer: int = Field(ge=0, le=3, description="index of the correct option")
    source: str = Field(description="'builtin', or the Hugging Face dataset it was read from")
    form: IdForm | None = Field(default=None, description="an in-scope question's form (how_to, policy, definition, "
                                                          "scenario, negative, calculation); None for bank questions "
                                                          "and the roles' hand-written ones")

    @field_validator("options")
    @classmethod
    def _distinct_options(cls, options: list[str]) -> list[str]:
        if any(not option.strip() for option in options):
            raise ValueError("an option is empty")
        if len({option.strip() for option in options}) != len(options):
            raise ValueError("two options are the same")
        return options

    @property
    def answer_letter(self) -> str:
        return OPTION_LETTERS[self.answer]


class Relatedness(Model):
    """How close a bank question is to a role's scope, as the relatedness gate scored it."""

    score: float = Field(description="builtin: how many of the role's vocabulary terms the question uses; llm: the "
                                     "gatekeeper's 0-10 rating")
    threshold: float = Field(description="a question scoring this or more is too close to the role and was dropped")
    method: Literal["lexical", "llm"] = Field(description="lexical: the role's vocabulary terms counted (builtin); "
                                                          "llm: a gatekeeper model's rating")
    matched: list[str] = Field(default_factory=list, description="lexical: the vocabulary terms found")
    reason: str = Field(default="", description="llm: the gatekeeper's one-line reason")


class ConsistencyCheck(Model):
    """Whether a laundered rewrite still asks the same question, with the same options and answer."""

    passed: bool = Field(description="the rewrite asks the same question, with the same options and answer")
    methods: list[str] = Field(description="'verbatim' (question and options found unchanged, deterministic), "
                                           "'options_kept' (a recast: every option found with its letter, in order), "
                                           "'question_kept' (a recast: the question sentence found unchanged) and, in "
                                           "llm mode, 'llm_judge'")
    problems: list[str] = Field(default_factory=list, description="why it failed; empty when it passed")
    judge_model: str | None = Field(default=None, description="llm mode: the judge's model (family)")


class Turn(Model):
    """One earlier message of a conversation an item continues."""

    role: Literal["user", "assistant"] = Field(description="who sent it: the user or the assistant")
    content: str = Field(description="the message's text")


# The conversations an item may continue (OffTopicEval's multi-turn settings): `after_turns`, two in-scope
# questions the assistant already answered; `retry` (off-topic items only), the same question asked plainly
# first and refused, then asked again in the item's wrapping.
MultiTurn = Literal["after_turns", "retry"]


class OodItem(Model):
    """One user message to a scoped assistant, with what the assistant should do with it."""

    item_id: str = Field(description="unique in the dataset")
    kind: ItemKind = Field(description="id (serve it), direct_ood (refuse), laundered_ood (refuse, though it is "
                                       "dressed as the role's work), recast_ood (refuse, though it is recast as a "
                                       "task of the role's workflow and the message presses not to refuse)")
    role_id: str = Field(description="the scoped assistant the message is sent to (a row of the roles config)")
    language: Language = Field(description="the language of the message and of the system prompt: en, zh or hi")
    system_prompt: str = Field(description="the role's policy rendered as the assistant's system prompt")
    prompt_variant: PromptVariant = Field(default="ours", description="how the system prompt renders the policy: "
                                                                      "ours, generic (OffTopicEval-style) or minimal")
    history: list[Turn] = Field(default_factory=list, description="earlier turns of the conversation, sent between "
                                                                "the system prompt and the query (empty: one turn)")
    multi_turn: MultiTurn | None = Field(default=None, description="which conversation `history` is: after_turns "
                                                                   "(two in-scope questions answered first) or retry "
                                                                   "(the question asked plainly and refused first)")
    policy_language: Language | None = Field(default=None, description="the system prompt's language when it is not "
                                                                       "the message's: OffTopicEval's English-policy "
                                                                       "cross-lingual setting (None: the message's own)")
    query: str = Field(description="the user message, without an evaluation suffix")
    question: Question = Field(description="the core question the message asks, options and answer included")
    expected: Literal["accept", "refuse"] = Field(description="accept for id, refuse for both OOD kinds")
    frame_id: str | None = Field(default=None, description="the workflow frame the query was wrapped in, or the "
                                                           "recast template (None: the question asked as it is)")
    relatedness: Relatedness | None = Field(default=None, description="OOD items: the gate's score of the question "
                                                                      "against this role")
    consistency: ConsistencyCheck | None = Field(default=None, description="laundered and recast items: the check "
                                                                           "the rewrite passed")
    provenance: Provenance = Field(description="how the item was made: backend, models, prompt hashes, seed, code "
                                               "version, time")
    canary: str = Field(default="", description="the dataset's canary string: filter it out of training data")

    @property
    def prompt_language(self) -> str:
        """The language the system prompt (and so the refusal sentence) is written in."""
        return self.policy_language or self.language

    @model_validator(mode="after")
    def _expected_matches_kind(self) -> OodItem:
        if self.expected != ("accept" if self.kind == "id" else "refuse"):
            raise ValueError(f"a {self.kind} item is expected to {'accept' if self.kind == 'id' else 'refuse'}")
        if self.kind in WRAPPED_KINDS and (self.consistency is None or not self.consistency.passed):
            raise ValueError(f"a {self.kind} item needs a passed consistency check")
        return self


class OodScore(Model):
    """An assistant's (or scripted baseline's) scores on a set of items, OffTopicEval's way."""

    agent: str
    suffix: str = Field(description="the evaluation suffix the replies answered: plain, p_ground or q_ground")
    language: str = Field(description="a language, or 'all'")
    items: int
    ar_id: float = Field(description="share of id items accepted")
    rr_direct: float = Field(description="share of direct_ood items refused")
    rr_adaptive: float = Field(description="share of laundered_ood items refused")
    os: float = Field(description="harmonic mean of ar_id and the mean of rr_direct and rr_adaptive (0 when both are 0)")
    rr_recast: float | None = Field(default=None, description="share of recast_ood items refused (None: the items have "
                                                              "none)")
    os_recast: float | None = Field(default=None, description="OS with the recast items as the adaptive ones, as "
                                                              "OffTopicEval computes it (None: no recast items)")
    id_accuracy: float = Field(description="share of id items answered with the correct option")
    unparsed: int = Field(description="replies the parser could read as neither accepting nor refusing")


class OodLeakage(Model):
    """Whether laundered items give themselves away by surface words rather than by their question."""

    framed_share_accept: float = Field(description="share of items to accept that carry a workflow frame")
    framed_share_refuse: float = Field(description="share of direct and laundered items that carry a workflow frame "
                                                   "(recast items, which no in-scope item matches by design, left out)")
    frames_accept: dict[str, int] = Field(default_factory=dict, description="framed in-scope items per frame_id")
    frames_refuse: dict[str, int] = Field(default_factory=dict, description="laundered items per frame_id")
    frame_distance: float = Field(default=0.0, description="total variation distance between the two frame "
                                                           "distributions (0: the same; a frame drawn for one kind "
                                                           "more than the other would show here)")
    wrapper_accuracy: float = Field(description="held-out accuracy of a bag-of-words classifier telling laundered "
                                                "from framed id items by the words around the question (question "
                                                "and options masked); 0.5 is chance")
    full_text_accuracy: float = Field(description="the same classifier on the whole message, question included; high "
                                                  "by design, since the question is what makes an item off-topic")
    threshold: float = Field(description="wrapper_accuracy above this refuses the release")
    folds: int
    items: int


class FramedQuery(Model):
    """A question wrapped in a role's workflow, or recast as its work: the user message and the frame or
    recast template it came from."""

    query: str = Field(description="the user message: a frame holds the question block verbatim; a recast holds "
                                   "every option with its letter")
    frame_id: str = Field(description="builtin: the frame's or recast template's id; llm: 'llm'")


class QuestionBank(Model):
    questions: list[Question] = Field(description="every version of every question, all languages")
    source: str = Field(description="'builtin' or the Hugging Face dataset")

    def by_id(self) -> dict[str, dict[str, Question]]:
        grouped: dict[str, dict[str, Question]] = defaultdict(dict)
        for question in self.questions:
            grouped[question.question_id][question.language] = question
        return dict(grouped)
