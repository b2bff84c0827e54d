"""The builtin roles: one YAML file per scoped assistant in `roles/`, read into a `RolePolicy` and its
in-scope multiple-choice questions. See generators/ood/README.md for the file format."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml
from pydantic import ValidationError

from abstaingen.errors import AbstaingenError
from abstaingen.generators.ood.builtin.frames import frame_check
from abstaingen.generators.ood.builtin.task_templates import TaskTemplate
from abstaingen.model.common import Model
from abstaingen.model.ood import LANGUAGES, Question, RolePolicy

FOLDER = Path(__file__).parent / "roles"


class BuiltinRole(Model):
    policy: RolePolicy
    questions: list[Question]
    templates: list[TaskTemplate]


def read_role(path: Path) -> BuiltinRole:
    """A role file; anything missing or malformed is one error naming the file and the place."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise AbstaingenError(f"{path}: cannot read the role: {exc}") from None
    if not isinstance(data, dict):
        raise AbstaingenError(f"{path}: a role file is a mapping with role_id, texts and id_questions")
    try:
        policy = RolePolicy.model_validate({"role_id": data.get("role_id"), "texts": data.get("texts"),
                                            "excluded_subjects": data.get("excluded_subjects") or []})
    except ValidationError as exc:
        raise AbstaingenError(f"{path}: invalid role: {_first(exc)}") from None
    if missing := [language for language in LANGUAGES if language not in policy.texts]:
        raise AbstaingenError(f"{path}: the policy has no text in {', '.join(missing)}")
    for language, text in policy.texts.items():
        for number, template in enumerate(text.frames):
            if problems := frame_check(template):
                raise AbstaingenError(f"{path}: texts.{language}.frames[{number}]: {problems[0]}")
    questions: list[Question] = []
    entries = data.get("id_questions")
    if not isinstance(entries, list) or not entries:
        raise AbstaingenError(f"{path}: id_questions must be a non-empty list")
    seen: set[str] = set()
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise AbstaingenError(f"{path}: id_questions #{number} needs an id")
        if entry["id"] in seen:
            raise AbstaingenError(f"{path}: id_questions #{number}: id {entry['id']!r} is used twice")
        seen.add(entry["id"])
        for language in LANGUAGES:
            written = entry.get(language)
            if not isinstance(written, dict):
                raise AbstaingenError(f"{path}: id_questions {entry['id']!r} has no {language} version")
            try:
                questions.append(Question(
                    question_id=f"{policy.role_id}.{entry['id']}", subject=policy.role_id, language=language,
                    text=written.get("text"), options=written.get("options"), answer=entry.get("answer"),
                    source="builtin"))
            except ValidationError as exc:
                raise AbstaingenError(f"{path}: id_questions {entry['id']!r} ({language}): {_first(exc)}") from None
    templates: list[TaskTemplate] = []
    for number, entry in enumerate(data.get("task_templates") or [], start=1):
        if not isinstance(entry, dict):
            raise AbstaingenError(f"{path}: task_templates #{number} is not a mapping")
        fields = {key: value for key, value in entry.items() if key not in LANGUAGES}
        try:
            templates.append(TaskTemplate.model_validate(
                fields | {"texts": {language: entry[language] for language in LANGUAGES if language in entry}}))
        except ValidationError as exc:
            raise AbstaingenError(f"{path}: task_templates {entry.get('id', number)!r}: {_first(exc)}") from None
    if len({template.id for template in templates}) != len(templates):
        raise AbstaingenError(f"{path}: two task_templates share an id")
    return BuiltinRole(policy=policy, questions=questions, templates=templates)


@cache
def builtin_roles() -> tuple[BuiltinRole, ...]:
    """Every builtin role, by role_id."""
    roles = [read_role(path) for path in sorted(FOLDER.glob("*.yaml"))]
    ids = [role.policy.role_id for role in roles]
    if len(set(ids)) != len(ids):
        raise AbstaingenError(f"{FOLDER}: two role files share a role_id")
    return tuple(roles)


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"


def main(argv: list[str] | None = None) -> None:
    """Print what builtin roles' task templates make: each template's parameter draws, and two questions of
    each in every language, with the answer."""
    import argparse
    import random

    from abstaingen.validators.ood import question_block

    parser = argparse.ArgumentParser(description="show what a builtin role's task templates make")
    parser.add_argument("roles", nargs="+", help="role_ids (roles/<role_id>.yaml)")
    for role_id in parser.parse_args(argv).roles:
        role = read_role(FOLDER / f"{role_id}.yaml")
        print(f"== {role_id}: {len(role.templates)} templates, {sum(t.space() for t in role.templates)} draws")
        for template in role.templates:
            print(f"-- {template.id} ({template.calc}), {template.space()} draws")
            rng = random.Random(7)
            for _ in range(2):
                for question in template.draw(role_id, rng, lambda group: False):
                    print(f"{question_block(question)}\n   answer {'ABCD'[question.answer]}")


if __name__ == "__main__":
    main()
