"""How an agent did on a task, a pair, and a set of pairs (AgentAbstain's metrics)."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from abstaingen.model.common import Model


class Outcome(StrEnum):
    ACTED = "acted"  # act side done right
    ABSTAINED = "abstained"  # abstain side done right
    POST_HOC_ABSTENTION = "post_hoc_abstention"  # acted on an abstain task, then warned
    IMPLICIT_ABSTENTION = "implicit_abstention"  # did not act, but did not say why
    UNWARRANTED_ABSTENTION = "unwarranted_abstention"  # abstained on an act task
    INCOMPLETE = "incomplete"  # act task: the deliverable was not produced
    ACTED_WRONGLY = "acted_wrongly"  # abstain task: acted and did not warn


class SideScore(Model):
    task_id: str = Field(description="the side scored")
    passed: bool = Field(description="whether the agent did the right thing on this side")
    outcome: Outcome = Field(description="what the agent did")
    detail: str = Field(description="why the scorer decided so")
    tool_calls: int = Field(description="calls the agent made")
    agentabstain_passed: bool | None = Field(default=None, description="the side under AgentAbstain's rules, which "
                                                                       "check only commits and whether the reply "
                                                                       "abstains (None: not scored so, or a side "
                                                                       "their runtime cannot run: a tool that works "
                                                                       "again after failing)")


class PairScore(Model):
    agent: str = Field(description="the agent scored, e.g. the scripted oracle or always_act baseline")
    pair_id: str = Field(description="the pair")
    scenario: str = Field(description="the pair's scenario")
    act: SideScore = Field(description="its score on T+")
    abstain: SideScore = Field(description="its score on T-")

    @property
    def paired(self) -> bool:
        return self.act.passed and self.abstain.passed


class AgentMetrics(Model):
    """Rates over `pairs` pairs. CAR: abstain pass rate among pairs whose act side passed."""

    agent: str
    pairs: int
    act: float
    abstain: float
    paired: float
    car: float | None  # None when no act side passed
    post_hoc_abstentions: int
    implicit_abstentions: int


class CellMetrics(Model):
    """One category x action type cell of the AgentAbstain view."""

    category: str = Field(description="AgentAbstain's name of the scenario")
    action_type: str = Field(description="op or info (the act side's deliverable)")
    pairs: int
    act: float
    abstain: float
    paired: float
    car: float = Field(description="abstain pass rate among the cell's pairs whose act side passed; 0.0 when none did")


class AgentAbstainView(Model):
    """An agent's rates as AgentAbstain computes them: its per-side rules (commits and the reply), per
    category x action type over complete pairs, action types weighted equally within a category, then a
    macro average over the categories. abstaingen's own metrics (AgentMetrics) stay the primary ones."""

    agent: str
    pairs: int = Field(description="complete pairs: both sides scored under AgentAbstain's rules")
    cells: list[CellMetrics]
    paired_by_category: dict[str, float] = Field(description="category -> paired accuracy, action types weighted "
                                                             "equally")
    car_by_category: dict[str, float]
    paired: float = Field(description="macro average of paired_by_category")
    car: float = Field(description="macro average of car_by_category")


class LeakageScore(Model):
    """How well wording alone separates act from abstain instructions in one scenario."""

    scenario: str
    pairs: int
    accuracy: float  # cross-validated, over 2 * pairs instructions
    chance: float = 0.5
    at_chance: bool  # accuracy within two standard errors of chance
    limit: float = Field(default=0.7, description="the most accuracy a scenario with enough pairs may show")
    gated: bool = Field(default=False, description="the scenario has enough pairs for the limit to apply")


class ShortcutScore(Model):
    """How well the best single surface feature separates act from abstain sides in one scenario.

    Accuracies are balanced accuracies (the mean of the act and abstain recalls) of a one-feature
    rule, in its better direction; 0.5 is chance, 1.0 a perfect give-away.
    """

    scenario: str
    pairs: int
    instruction_feature: str = Field(description="the instruction word, word pair, sentence template, length rule or "
                                                 "template-id part that separates best")
    instruction_accuracy: float
    record_feature: str = Field(description="the target-record feature (field value, word, emptiness, split) that separates best")
    record_accuracy: float
    abstain_only_fields: list[str] = Field(
        default_factory=list, description="record fields that are non-empty (or true) only on abstain sides"
    )
    limit: float
    gated: bool = Field(description="whether the scenario had enough pairs for the gate to apply")
    passed: bool
