"""Environment synthesis for the builtin backend: seeded state, tool specs and handler source."""

from __future__ import annotations

import random
from datetime import date, timedelta

from abstaingen.generators.builtin.blueprint import DomainBlueprint
from abstaingen.model import CapabilitySpec, EnvironmentBundle, ToolKind, ToolSpec, content_hash

ACTIVE = "active"
RECORDS_PER_OWNER = (2, 4)
OWNERS_PER_ENVIRONMENT = 8


def synthesize_environment(blueprint: DomainBlueprint, spec: CapabilitySpec, seed: int) -> EnvironmentBundle:
    rng = random.Random(f"{seed}:{blueprint.name}:{spec.seed_instruction}")
    state = seeded_state(blueprint, rng)
    tools = with_examples(tool_specs(blueprint), blueprint, state)
    body = {
        "domain": blueprint.name,
        "description": f"{spec.summary} Serves {len(tools)} tools over {len(state[blueprint.collection])} "
        f"{blueprint.collection}.",
        "tools": [t.model_dump(mode="json") for t in tools],
        "state_schema": state_schema(blueprint),
        "initial_state": state,
        "implementation": implementation_source(blueprint),
    }
    return EnvironmentBundle(env_id=f"{blueprint.name}-{content_hash(body)[:10]}", origin="builtin", **body)


def seeded_state(bp: DomainBlueprint, rng: random.Random) -> dict:
    owners = rng.sample(bp.owners, OWNERS_PER_ENVIRONMENT)
    start = date(2027, 1, 4) + timedelta(days=rng.randrange(0, 300))
    records, mirrors = [], []
    ids = rng.sample(range(10000, 99999), OWNERS_PER_ENVIRONMENT * RECORDS_PER_OWNER[1])
    for owner in owners:
        days = sorted(rng.sample(range(0, 90), rng.randint(*RECORDS_PER_OWNER)))
        for day in days:
            record_id = f"{bp.id_prefix}-{ids.pop()}"
            amount = rng.randrange(bp.amount_range[0], bp.amount_range[1]) // 5 * 5
            records.append({
                "id": record_id,
                bp.owner_field: owner,
                bp.key.name: rng.choice(bp.key.choices),
                "date": (start + timedelta(days=day)).isoformat(),
                bp.amount_field: amount,
                bp.info_field: rng.choice(bp.info_choices),
                "status": ACTIVE,
                bp.amount_commit.field: 0,
                "notes": "",
            })
            mirrors.append({"id": bp.mirror_id(record_id), bp.id_arg: record_id,
                            bp.amount_field: amount})
    rng.shuffle(records)
    return {bp.collection: records, bp.mirror_collection: mirrors}


def state_schema(bp: DomainBlueprint) -> dict:
    def collection(fields: dict) -> dict:
        return {"type": "array", "items": {"type": "object", "properties": fields, "required": sorted(fields)}}

    text, number = {"type": "string"}, {"type": "number"}
    return {
        "type": "object",
        "properties": {
            bp.collection: collection({
                "id": text, bp.owner_field: text, bp.key.name: text, "date": text, bp.amount_field: number,
                bp.info_field: text, "status": text, bp.amount_commit.field: number, "notes": text,
            }),
            bp.mirror_collection: collection({"id": text, bp.id_arg: text, bp.amount_field: number}),
        },
    }


def _object(properties: dict, required: list[str]) -> dict:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def with_examples(tools: list[ToolSpec], bp: DomainBlueprint, state: dict) -> list[ToolSpec]:
    """One valid call per tool, on the first record, for the environment checks."""
    record = state[bp.collection][0]
    by_id = {bp.id_arg: record["id"]}
    examples = {bp.find_tool: {bp.owner_field: record[bp.owner_field]}, bp.amount_commit.name: {**by_id, "amount": 5}}
    return [t.model_copy(update={"examples": [examples.get(t.name, by_id)]}) for t in tools]


def tool_specs(bp: DomainBlueprint) -> list[ToolSpec]:
    text, number = {"type": "string"}, {"type": "number"}
    by_id = _object({bp.id_arg: text}, [bp.id_arg])
    return [
        ToolSpec(
            name=bp.find_tool, kind=ToolKind.LOOKUP,
            description=f"Search {bp.collection}. Every filter is optional; text filters ignore case, dates are "
            f"YYYY-MM-DD and ranges are inclusive. Returns summaries (id, {bp.owner_field}, {bp.key.name}, "
            "date, status).",
            input_schema=_object({
                bp.owner_field: text, bp.key.name: text, "date": text, "date_from": text, "date_to": text,
                f"min_{bp.amount_field}": number, f"max_{bp.amount_field}": number,
            }, []),
        ),
        ToolSpec(name=bp.get_tool, kind=ToolKind.LOOKUP, input_schema=by_id,
                 description=f"Read every field of one {bp.entity}, including its notes."),
        ToolSpec(name=bp.mirror_tool, kind=ToolKind.LOOKUP, input_schema=by_id, description=bp.mirror_description),
        ToolSpec(name=bp.verify_name, kind=ToolKind.VERIFY, input_schema=by_id, description=bp.verify_description),
        *[
            ToolSpec(name=c.name, kind=ToolKind.COMMIT, input_schema=by_id, description=c.description,
                     irreversible=True, effect=f"{bp.collection}.status={c.new_status}")
            for c in (bp.primary, bp.alternate)
        ],
        ToolSpec(
            name=bp.amount_commit.name, kind=ToolKind.COMMIT, description=bp.amount_commit.description,
            input_schema=_object({bp.id_arg: text, "amount": {"type": "number", "exclusiveMinimum": 0}},
                                 [bp.id_arg, "amount"]),
            irreversible=True, effect=f"{bp.collection}.{bp.amount_commit.field}",
        ),
    ]


def implementation_source(bp: DomainBlueprint) -> str:
    """Handler module for the runtime: one function per tool over the JSON state."""
    col, mirror, key, amount, idarg = bp.collection, bp.mirror_collection, bp.key.name, bp.amount_field, bp.id_arg
    owner = bp.owner_field
    status_commits = "\n\n".join(
        f'''def {c.name}(state, {idarg}):
    record = _record(state, {idarg})
    _require_active(record)
    record["status"] = "{c.new_status}"
    return {{"{idarg}": {idarg}, "status": "{c.new_status}"}}'''
        for c in (bp.primary, bp.alternate)
    )
    return f'''"""Tools of the builtin {bp.name} environment (generated by abstaingen)."""

SUMMARY_FIELDS = ("id", "{owner}", "{key}", "date", "status")


def _record(state, record_id):
    for record in state["{col}"]:
        if record["id"] == record_id:
            return record
    raise ValueError("No {bp.entity} with id " + str(record_id))


def _require_active(record):
    if record["status"] != "{ACTIVE}":
        raise ValueError("{bp.entity.capitalize()} " + record["id"] + " is " + record["status"] + ", not {ACTIVE}")


def {bp.find_tool}(state, {owner}=None, {key}=None, date=None, date_from=None, date_to=None,
        min_{amount}=None, max_{amount}=None):
    results = []
    for record in state["{col}"]:
        if {owner} is not None and record["{owner}"].lower() != {owner}.strip().lower():
            continue
        if {key} is not None and record["{key}"].lower() != {key}.strip().lower():
            continue
        if date is not None and record["date"] != date:
            continue
        if date_from is not None and record["date"] < date_from:
            continue
        if date_to is not None and record["date"] > date_to:
            continue
        if min_{amount} is not None and record["{amount}"] < min_{amount}:
            continue
        if max_{amount} is not None and record["{amount}"] > max_{amount}:
            continue
        results.append({{field: record[field] for field in SUMMARY_FIELDS}})
    results.sort(key=lambda r: (r["date"], r["id"]))
    return {{"count": len(results), "results": results}}


def {bp.get_tool}(state, {idarg}):
    return dict(_record(state, {idarg}))


def {bp.mirror_tool}(state, {idarg}):
    for entry in state["{mirror}"]:
        if entry["{idarg}"] == {idarg}:
            return dict(entry)
    raise ValueError("No {bp.mirror_entity} for {bp.entity} " + str({idarg}))


def {bp.verify_name}(state, {idarg}):
    record = _record(state, {idarg})
    eligible = record["status"] == "{ACTIVE}"
    reason = "{ACTIVE} and within policy" if eligible else "{bp.entity} is " + record["status"]
    return {{"{idarg}": {idarg}, "eligible": eligible, "reason": reason}}


{status_commits}


def {bp.amount_commit.name}(state, {idarg}, amount):
    record = _record(state, {idarg})
    _require_active(record)
    available = record["{amount}"] - record["{bp.amount_commit.field}"]
    if amount > available:
        raise ValueError("Amount " + str(amount) + " exceeds the available " + str(available))
    record["{bp.amount_commit.field}"] = record["{bp.amount_commit.field}"] + amount
    return {{"{idarg}": {idarg}, "{bp.amount_commit.field}": record["{bp.amount_commit.field}"]}}
'''
