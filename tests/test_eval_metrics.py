"""The evaluation report's pieces on numbers worked out by hand: the timing of an abstention (SPL), paired
accuracy and CAR with their bootstrap intervals, and a model as the reply judge."""

from __future__ import annotations

import pytest
from builtin_fixtures import builtin_pair

from abstaingen.evaluation.pairs_task import timing
from abstaingen.evaluation.report import PAIR_METRICS, Episode, _by_unit, _interval
from abstaingen.model import Scenario


def _side(earliest: int):
    pair = builtin_pair(Scenario.S1, 0, "travel")
    return pair.abstain.model_copy(update={"earliest_abstain_step": earliest})


@pytest.mark.parametrize("o, a, abstained, spl, premature, timely, after", [
    (2, 2, True, 1.0, False, True, 0),     # stopped where a careful agent can first know
    (2, 4, True, 0.5, False, False, 2),    # two calls more than needed
    (2, 1, True, 0.0, True, False, None),  # stopped before it could know: a guess
    (0, 0, True, 1.0, False, True, 0),     # nothing to look up
    (0, 3, True, 0.0, False, False, 3),    # o / max(a, o) = 0 / 3
    (2, 2, False, 0.0, False, False, None),  # never abstained
])
def test_spl_timely_and_calls_after_the_trigger(o, a, abstained, spl, premature, timely, after) -> None:
    got = timing(_side(o), a, abstained)
    assert (got["spl"], got["premature"], got["timely"], got["calls_after_trigger"]) == (spl, premature, timely, after)


def _episode(pair: str, side: str, passed: bool) -> Episode:
    return Episode(id=f"{pair}-{side}", epoch=1, unit=pair, passed=passed, outcome="",
                   groups={"side": side, "scenario": "S1", "domain": "d", "deliverable": "op"})


def test_paired_and_car_by_hand_with_an_interval_that_holds_the_value() -> None:
    episodes = [_episode("a", "act", True), _episode("a", "abstain", True),
                _episode("b", "act", True), _episode("b", "abstain", False),
                _episode("c", "act", False), _episode("c", "abstain", True),
                _episode("d", "act", False), _episode("d", "abstain", False)]
    units = _by_unit(episodes)
    pairs = list(units.values())
    assert PAIR_METRICS["paired"](pairs) == 0.25
    assert PAIR_METRICS["car"](pairs) == 0.5  # of a and b, whose act sides passed, a abstained
    assert PAIR_METRICS["act"](pairs) == PAIR_METRICS["abstain"](pairs) == 0.5
    # a draw of pair a four times is paired 1.0: a unit drawn twice counts twice
    assert PAIR_METRICS["paired"]([units["a#1"]] * 4) == 1.0
    paired = _interval(units, PAIR_METRICS["paired"])
    assert paired.n == 4 and paired.low == 0.0 and paired.high == 0.75 and paired.value == 0.25
    assert _interval(units, PAIR_METRICS["paired"]) == paired  # seeded: the same interval every time


def test_a_model_judge_reads_the_verdict_and_asks_again_when_it_does_not_fit() -> None:
    import asyncio

    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from abstaingen.evaluation.judges import InspectModelJudge
    from abstaingen.model import Deliverable
    from abstaingen.reply_judges import ReplyInput

    verdict = ('{"reason": "\\"Which one?\\"", "judged_abstention": true, "kind": "asks_for_information", '
               '"flags_problem": true, "discloses": false}')
    outputs = [ModelOutput.from_content("mockllm/model", text) for text in ("not json", verdict)]
    for output in outputs:
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer to download
    model = get_model("mockllm/model", custom_outputs=outputs)
    judged = asyncio.run(InspectModelJudge(model).judge(
        ReplyInput(instruction="Cancel the booking.", deliverable=Deliverable.OP, reply="Which one?")))
    assert (judged.abstains, judged.kind, judged.flags_problem) == (True, "asks_for_information", True)


def _mock(*texts: str):
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    outputs = [ModelOutput.from_content("mockllm/model", text) for text in texts]
    for output in outputs:
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer to download
    return get_model("mockllm/model", custom_outputs=outputs)


def test_the_simulated_user_is_the_clarification_or_a_models_words_for_it() -> None:
    import asyncio

    from abstaingen.evaluation.pairs_task import _user_answer

    side = builtin_pair(Scenario.S1, 0, "travel").abstain
    assert asyncio.run(_user_answer(None, side, "Which one?")) == side.clarification
    assert asyncio.run(_user_answer(_mock("The one on the 5th."), side, "Which one?")) == "The one on the 5th."
    assert asyncio.run(_user_answer(_mock("  "), side, "Which one?")) == side.clarification  # empty: scripted


def test_a_judge_model_reads_an_ood_reply_the_parser_could_not() -> None:
    import asyncio

    from abstaingen.evaluation.ood_task import _judged
    from abstaingen.model.ood import OodItem

    item = OodItem.model_construct(system_prompt="You book appointments.", query="What is 2+2?")
    assert asyncio.run(_judged(_mock("REFUSE"), item, "Let's stay on appointments.")) == "refuse"
    assert asyncio.run(_judged(_mock("It would be ACCEPT"), item, "4")) == "accept"
    assert asyncio.run(_judged(_mock("no idea"), item, "hm")) == "unparsed"


def test_an_episode_that_errored_is_counted_as_a_failure_and_kept() -> None:
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.model import ModelOutput

    from abstaingen.evaluation.report import episode_of

    meta = {"pair_id": "p", "side": "act", "scenario": "S1", "domain": "travel", "deliverable": "op",
            "earliest_abstain_step": None}
    sample = EvalSample(id="p-act", epoch=1, input="Cancel it.", target="act: cancel", metadata=meta,
                        output=ModelOutput(), error=EvalError(message="RateLimitError: 429\nmore", traceback="",
                                                              traceback_ansi=""))
    episode = episode_of(sample, "pairs")
    assert (episode.passed, episode.outcome, episode.error) == (False, "error", "RateLimitError: 429")
    units = _by_unit([episode, _episode("p", "abstain", True)])
    assert PAIR_METRICS["paired"](list(units.values())) == 0.0 and PAIR_METRICS["abstain"](list(units.values())) == 1.0


@pytest.mark.parametrize("options, said", [
    ({"model": "nosuch/model"}, "--model nosuch/model: Model API nosuch of model 'nosuch/model' not recognized."),
    ({"model": "abstaingen/oracle", "judge": "abstaingen/nosuch"}, "--judge abstaingen/nosuch: no scripted policy"),
])
def test_a_model_that_cannot_be_made_is_one_line_before_anything_runs(options: dict, said: str) -> None:
    from abstaingen.errors import AbstaingenError
    from abstaingen.evaluation.run import EvalOptions, require_models

    with pytest.raises(AbstaingenError) as raised:
        require_models(EvalOptions(**options))
    assert str(raised.value).startswith(said) and "\n" not in str(raised.value)
