"""Reply judges: read an agent's final reply to the user and say whether it abstains, whether it flags a
problem, and whether it reveals a value the task withholds. Scoring combines that with the trace.

A judge registers under a name with `@register`; `get_judge(name, config)` returns it. The builtin
`rules` judge is deterministic and offline, and what scoring uses unless told otherwise; the `llm`
judge (llm.py) asks the model that plays the judge role, through the same protocol.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from abstaingen.reply_judges.base import REPLY_JUDGES, ReplyInput, ReplyJudge, ReplyKind, ReplyVerdict, register

if TYPE_CHECKING:
    from abstaingen.config import GenerateConfig


def get_judge(name: str = "rules", config: GenerateConfig | None = None) -> ReplyJudge:
    """The reply judge `name`; a judge that calls a model reads its model and provider from `config`."""
    from abstaingen.reply_judges import llm, rules  # noqa: F401  (register the judges)

    return REPLY_JUDGES.find(name)(config)


__all__ = ["REPLY_JUDGES", "ReplyInput", "ReplyJudge", "ReplyKind", "ReplyVerdict", "get_judge", "register"]
