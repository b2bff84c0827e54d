"""In-scope questions made from a role's own policy, so that a builtin role has far more of them than its
hand-written ones (roles/*.yaml), in two forms:

- `policy`: "Which of these can you help me with?", one task of the role's `allowed` list among three of
  its `forbidden` list (a task that refers back to the others, "work out the amounts these tasks need", is
  left out);
- `negative`: "Which of these will you not do for me?", one forbidden task among three allowed ones.

Both are answered by the system prompt itself, in every variant that lists the tasks (ours, generic); the
minimal variant states the role's scope in its description, which a careful assistant reads the same way.
Each combination of tasks is one question (one wording per form and language, so that a release cannot
pass a reworded question off as a fresh one); the answer's position is a hash of the question_id.
"""

from __future__ import annotations

import hashlib
from itertools import combinations

from abstaingen.model.ood import LANGUAGES, IdForm, Question, RolePolicy

WORDING = {
    "policy": {"en": "Which of these can you help me with?", "zh": "下面哪一项是你可以帮我办理的？",
               "hi": "इनमें से किस काम में आप मेरी मदद कर सकते हैं?"},
    "negative": {"en": "Which of these will you not do for me?", "zh": "下面哪一项是你不会为我做的？",
                 "hi": "इनमें से कौन-सा काम आप मेरे लिए नहीं करेंगे?"},
}


def policy_questions(role: RolePolicy) -> list[Question]:
    """Every policy and negative question of the role, in each language of its texts."""
    english = role.texts[LANGUAGES[0]]
    # a task that refers back to the others ("work out the amounts these tasks need") reads wrong as an option
    usable = {"allowed": [i for i, task in enumerate(english.allowed) if "these tasks" not in task.lower()],
              "forbidden": [i for i, task in enumerate(english.forbidden) if "these tasks" not in task.lower()]}
    made = []
    forms: tuple[IdForm, ...] = ("policy", "negative")
    for form in forms:
        right_list, wrong_list = ("allowed", "forbidden") if form == "policy" else ("forbidden", "allowed")
        for right in usable[right_list]:
            for wrong in combinations(usable[wrong_list], 3):
                question_id = f"{role.role_id}.{form}.{right}.{'-'.join(map(str, wrong))}"
                position = int(hashlib.sha256(question_id.encode()).hexdigest()[:8], 16) % 4
                for language, text in role.texts.items():
                    tasks = {"allowed": text.allowed, "forbidden": text.forbidden}
                    options = [tasks[wrong_list][index] for index in wrong]
                    options.insert(position, tasks[right_list][right])
                    made.append(Question(question_id=question_id, subject=role.role_id, language=language,
                                         text=WORDING[form][language], options=[" ".join(o.split()) for o in options],
                                         answer=position, source="builtin", form=form))
    return made
