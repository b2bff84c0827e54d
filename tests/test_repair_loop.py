"""The llm backend's repair loop and prompts, against the stand-in model server: what a model gets
wrong is sent back with the findings and counted; what stays wrong ends in RepairFailed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jinja2
import pytest
from llm_stage import run_stage
from standin import Answer, Raw, StandIn

from abstaingen.model import CapabilitySpec
from abstaingen.prompts import FOLDER, RenderedPrompt, render
from abstaingen.providers.drafts import CapabilityDraft, strict_schema
from abstaingen.providers.repair import RepairFailed, RepairLog, draft

pytestmark = pytest.mark.component

GOOD = {"domain": "pet_clinic", "summary": "An assistant that books and changes visits at a pet clinic.",
        "capabilities": ["find a pet's visits", "book a visit", "cancel a visit"]}
BAD_SHAPE = {"domain": "Pet Clinic!", "summary": "Pets.", "capabilities": ["book"]}


def prompt() -> RenderedPrompt:
    return render("capability", schema=json.dumps(strict_schema(CapabilityDraft)),
                  instruction="Move my dog's checkup to Friday", domain=None)


def run(standin: StandIn, check=None, max_rounds: int = 2,
        wanted=None) -> tuple[CapabilityDraft | RepairFailed, RepairLog]:
    log = RepairLog()
    result = run_stage(standin, lambda caller: draft(caller, "capability", "writer", prompt(), CapabilityDraft, check,
                                                     max_rounds, log, wanted))
    return result, log  # type: ignore[return-value]


def test_a_good_first_answer_is_taken_as_it_is(standin: StandIn) -> None:
    standin.script("capability", Answer(GOOD))
    result, log = run(standin)
    assert result == CapabilityDraft(**GOOD)
    assert (log.first_try["capability"], log.repaired["capability"], standin.count()) == (1, 0, 1)


@pytest.mark.parametrize(("wrong", "finding"), [
    (Raw('{"domain": "pet_clinic", "summary": '), "reply: the reply is not JSON"),
    (Answer(BAD_SHAPE), "schema: domain: String should match pattern"),
])
def test_a_wrong_answer_is_sent_back_with_its_findings(wrong: object, finding: str, standin: StandIn) -> None:
    standin.script("capability", wrong, Answer(GOOD))
    result, log = run(standin)
    assert result == CapabilityDraft(**GOOD)
    assert (log.repaired["capability"], log.rounds["capability"]) == (1, 1)
    repair_message = standin.requests[1].body["messages"][1]["content"]
    assert "Your previous answer was" in repair_message and finding in repair_message
    assert repair_message.startswith(prompt().user)  # the original request is kept


def test_a_long_answer_goes_back_whole(standin: StandIn) -> None:
    """A real environment answer runs to ~30,000 characters; cut at 4,000, its repair round showed the model
    7 of its 25 tools and none of its rules, state or code, and 'change only what the reasons require' could
    not be followed."""
    long = {**GOOD, "summary": "An assistant for a pet clinic. " + "It books, moves and cancels visits. " * 900}
    standin.script("capability", Answer(long), Answer(GOOD))
    result, _ = run(standin, check=lambda c: _async(["too long"] if len(c.summary) > 200 else []))
    assert result == CapabilityDraft(**GOOD)
    repair_message = standin.requests[1].body["messages"][1]["content"]
    assert json.dumps(long["summary"])[1:-1] in repair_message


async def _async(value: list[str]) -> list[str]:
    return value


def test_the_stages_own_checks_count_like_schema_errors(standin: StandIn) -> None:
    async def must_be_veterinary(candidate: CapabilityDraft) -> list[str]:
        return [] if "vet" in candidate.domain else [f"domain {candidate.domain!r} should name the veterinary trade"]

    vet = {**GOOD, "domain": "vet_clinic"}
    standin.script("capability", Answer(GOOD), Answer(vet))
    result, log = run(standin, check=must_be_veterinary)
    assert result == CapabilityDraft(**vet)
    assert "check: domain 'pet_clinic' should name the veterinary trade" in standin.requests[1].body["messages"][1]["content"]
    assert log.reasons["capability"] == {"check": 1}


def test_an_answer_that_stays_wrong_fails_after_the_last_round(standin: StandIn) -> None:
    standin.otherwise("capability", Answer(BAD_SHAPE))
    result, log = run(standin, max_rounds=2)
    assert isinstance(result, RepairFailed) and "no usable answer after repairs" in str(result)
    assert standin.count() == 3  # the first answer and two repairs
    assert (log.failed["capability"], log.rounds["capability"], log.reasons["capability"]["schema"]) == (1, 2, 9)


async def wants_a_booking_capability(candidate: CapabilityDraft) -> list[str]:
    return [] if any("book" in c for c in candidate.capabilities) else ["capabilities: nothing books a visit"]


def test_what_is_wanted_goes_back_while_rounds_remain(standin: StandIn) -> None:
    lean = {**GOOD, "capabilities": ["find a pet's visits", "cancel a visit"]}
    standin.script("capability", Answer(lean), Answer(GOOD))
    result, log = run(standin, wanted=wants_a_booking_capability)
    assert result == CapabilityDraft(**GOOD) and log.repaired["capability"] == 1
    assert "check: capabilities: nothing books a visit" in standin.requests[1].body["messages"][1]["content"]


def test_a_draft_still_lacking_what_is_wanted_is_taken_when_the_rounds_are_spent(standin: StandIn) -> None:
    """The last round's answer is worse (it breaks the schema): the last one that passed the checks is taken."""
    lean = {**GOOD, "capabilities": ["find a pet's visits", "cancel a visit"]}
    leaner = {**lean, "capabilities": ["find a pet's visits", "cancel a visit", "move a visit"]}
    standin.script("capability", Answer(lean), Answer(leaner), Answer(BAD_SHAPE))
    result, log = run(standin, max_rounds=2, wanted=wants_a_booking_capability)
    assert result == CapabilityDraft(**leaner) and standin.count() == 3
    assert (log.repaired["capability"], log.failed["capability"], log.rounds["capability"]) == (1, 0, 2)


def test_the_strict_schema_closes_every_object_and_drops_what_strict_modes_refuse() -> None:
    schema = strict_schema(CapabilityDraft)
    assert schema["additionalProperties"] is False and schema["required"] == ["domain", "summary", "capabilities"]
    text = json.dumps(schema)
    assert all(f'"{word}"' not in text for word in ("pattern", "minLength", "maxItems", "default", "title"))


def test_a_prompt_needs_every_value_and_carries_its_templates_hash() -> None:
    with pytest.raises(jinja2.UndefinedError):
        render("capability", schema="{}", domain=None)
    rendered = prompt()
    assert rendered.template_hash == hashlib.sha256((Path(FOLDER) / "capability.j2").read_bytes()).hexdigest()
    assert "Move my dog's checkup to Friday" in rendered.user and '"additionalProperties": false' in rendered.system


def test_capability_extraction_keeps_a_domain_the_seed_names(standin: StandIn) -> None:
    from abstaingen.generators.llm.capability import extract_capabilities

    standin.script("capability", Answer(GOOD), Answer({**GOOD, "domain": "vet_practice"}))
    spec = run_stage(standin, lambda caller: extract_capabilities(caller, "writer", "Move my dog's checkup to Friday",
                                                                  "vet_practice"))
    assert isinstance(spec, CapabilitySpec)
    assert spec.domain == "vet_practice" and spec.seed_instruction == "Move my dog's checkup to Friday"
    assert "the domain is given as 'vet_practice'; keep it" in standin.requests[1].body["messages"][1]["content"]
