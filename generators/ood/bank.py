"""The off-topic question bank: the one abstaingen ships (offline, en/zh/hi), or a public multiple-choice
bank in the MMLU layout read from the Hugging Face Hub by name (English; the llm backend translates)."""

from __future__ import annotations

from abstaingen.config import OodBankConfig
from abstaingen.errors import AbstaingenError, shown
from abstaingen.model.ood import OPTION_LETTERS, Question, QuestionBank
from abstaingen.optional import require


def load_bank(config: OodBankConfig, languages: list[str]) -> QuestionBank:
    if config.hf_name is None:
        from abstaingen.generators.ood.builtin.bank import builtin_bank

        return QuestionBank(questions=[q for q in builtin_bank() if q.language in languages], source="builtin")
    return QuestionBank(questions=hf_questions(config), source=config.hf_name)


def hf_questions(config: OodBankConfig) -> list[Question]:
    """Rows with `question`, `choices` (four) and `answer` (an index, or a letter A-D), and optionally
    `subject`. Rows of another shape are skipped; a dataset without those columns is one error."""
    require("datasets", "an [ood.bank] hf_name")
    import datasets

    name = config.hf_name or ""
    try:
        rows = datasets.load_dataset(name, config.hf_config, split=config.split)
    except Exception as exc:  # noqa: BLE001 - the library raises many kinds; every one is the same user error
        raise AbstaingenError(f"ood.bank: cannot load {shown(name)} ({config.hf_config}, {config.split}): "
                              f"{shown(str(exc), 200)}") from None
    needed = {"question", "choices", "answer"}
    if missing := needed - set(rows.column_names):
        raise AbstaingenError(f"ood.bank: {shown(name)} lacks the columns {', '.join(sorted(missing))} (an MMLU-style "
                              "bank has question, choices, answer)")
    questions: list[Question] = []
    for index, row in enumerate(rows):
        if len(questions) >= config.limit:
            break
        answer = row["answer"]
        if isinstance(answer, str) and answer.strip().upper() in OPTION_LETTERS:
            answer = OPTION_LETTERS.index(answer.strip().upper())
        choices = [str(choice) for choice in row["choices"] or []]
        if (not isinstance(answer, int) or len(choices) != 4 or not str(row["question"]).strip()
                or len(set(choices)) != 4 or "\n" in "".join(choices)):
            continue
        questions.append(Question(question_id=f"hf{index:06d}", subject=str(row.get("subject") or "general"),
                                  language="en", text=" ".join(str(row["question"]).split()), options=choices,
                                  answer=answer, source=name))
    if not questions:
        raise AbstaingenError(f"ood.bank: {shown(name)} has no usable four-option question")
    return questions
