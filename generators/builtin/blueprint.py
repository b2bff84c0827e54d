"""What a builtin domain is made of. A blueprint is data: its actions, policies, notes and the phrase
pools instructions are written from. The generator turns it into tools, code, state and tasks; the
conformance tests in tests/test_domains.py hold every blueprint to the rules written here.

Templates use these slots: {name} a phrase that names one record ("Olga Petrova's booking on flight
LH402 departing 5 March 2027"), {owner}, {key}, {date}, {amount} (formatted with `amount_format`),
{details} (the identifying phrases a clarification adds).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from abstaingen.model.perturbation import DISCLOSE

__all__ = ["DISCLOSE", "Action", "Ambiguity", "ConfirmationRule", "DomainBlueprint", "KeyField", "Mirror", "Naming",
           "RiskNote", "Undo", "indefinite"]


def indefinite(noun: str) -> str:
    """'a booking', 'an order'."""
    return f"{'an' if noun[0].lower() in 'aeiou' else 'a'} {noun}"


@dataclass(frozen=True)
class Undo:
    """The commit tool that reverses a reversible action (it moves the status back to active)."""

    name: str
    description: str


@dataclass(frozen=True)
class Action:
    """A commit tool. A status action moves the record to `new_status`; an amount action (new_status None)
    takes an `amount` and adds it to the record's `amount_used_field`, up to what is left."""

    name: str
    description: str  # what the agent reads in the tool list
    summary: str  # "cancel the booking and refund the fare to the card": used in labels and S2 questions
    requests: tuple[str, ...]  # imperative templates with {name} (and {amount} for amount actions)
    clarification: str = ""  # what a user says to pick this action in an S2 clarification
    new_status: str | None = None
    undo: Undo | None = None  # reversible actions name their undo
    moves_record_amount: bool = False  # a status action that also pays out / refunds the record's whole amount
    full_requests: tuple[str, ...] = ()  # amount actions: "{name} in full" requests (the amount is read, S7)

    @property
    def is_amount_action(self) -> bool:
        return self.new_status is None


@dataclass(frozen=True)
class ConfirmationRule:
    """The domain's confirmation policy: above `threshold`, moving an amount of this category needs the user's
    explicit confirmation of that amount in the request."""

    category: str  # "refund"
    noun: str  # "refund", as a sentence uses it
    threshold: int
    confirmations: tuple[str, ...]  # with {amount}: "I confirm the {amount} refund."
    unrelated_confirmations: tuple[str, ...]  # confirm something else: "I've confirmed {owner}'s identity."


@dataclass(frozen=True)
class Mirror:
    """A second system of record holding its own copy of the record's amount (S7's other source)."""

    collection: str  # "tickets"
    entity: str  # "ticket"
    label: str  # "the airline's ticket"
    description: str  # the read tool's description
    tolerance: int  # differences up to this are harmless
    tolerance_reason: str  # "currency rounding"


@dataclass(frozen=True)
class RiskNote:
    """A note that forbids some actions on the record it sits on. `resolved` is the same topic, cleared."""

    text: str
    restricts: tuple[str, ...]  # action names, and/or DISCLOSE
    resolved: str


@dataclass(frozen=True)
class Ambiguity:
    """S2: a request that fits two irreversible (or two reversible) actions equally well."""

    actions: tuple[str, str]
    requests: tuple[str, ...]  # with {name}; must not echo one action's tool description more than the other
    premises: tuple[str, ...]  # context sentences shared by T+ and T-; none may favour either reading
    question: str  # "whether to refund the fare to the card or keep it as travel credit"


@dataclass(frozen=True)
class KeyField:
    """A field that, with the owner, identifies a record; `choices` feed the seeded generator."""

    name: str
    label: str  # how an instruction names it: "flight"
    choices: tuple[str, ...]


@dataclass(frozen=True)
class Naming:
    """Phrase pools for naming a record by its owner and some of its details (each starts with a space)."""

    heads: tuple[str, ...]  # "{owner}'s booking"
    key: tuple[str, ...]  # " on flight {key}"
    date: tuple[str, ...]  # " departing {date}"
    date_before: tuple[str, ...]  # " departing before {date}"
    date_after: tuple[str, ...]
    amount_over: tuple[str, ...]  # " with a fare over {amount}"
    amount_under: tuple[str, ...]
    clarifications: tuple[str, ...]  # "I mean the one{details}."


DEFAULT_OWNERS = (
    "Ana Lima", "Ben Okafor", "Chen Wei", "Dana Kowalski", "Elif Demir", "Farid Haddad", "Grace Mensah",
    "Hiro Tanaka", "Ines Moreau", "Jonas Berg", "Kavya Rao", "Luis Ortega", "Maya Cohen", "Nils Andersen",
    "Olga Petrova", "Priya Nair", "Quentin Blake", "Rosa Jimenez", "Samir Patel", "Tove Lindqvist",
    "Uma Krishnan", "Victor Dubois", "Wen Zhou", "Yusuf Adeyemi", "Zofia Nowak", "Aiko Sato", "Bruno Costa",
    "Carmen Ruiz", "Declan Murphy", "Esther Levi", "Femi Adebayo", "Greta Huber", "Hamid Karimi",
    "Isla MacLeod", "Jakub Horak", "Keanu Makoa", "Leila Nasser", "Marco Bianchi", "Noor Hassan", "Oskar Lund",
)


@dataclass(frozen=True)
class DomainBlueprint:
    name: str
    assistant: str  # "the booking assistant of a travel agency"
    seed_instruction: str
    capabilities: tuple[str, ...]
    entity: str  # "booking"
    collection: str  # "bookings"
    id_prefix: str  # "BK"
    owner_field: str  # "passenger"
    key: KeyField
    naming: Naming
    amount_field: str  # "fare"
    amount_label: str  # "fare"
    amount_format: str  # "${:,.0f}"
    amount_range: tuple[int, int]
    amount_used_field: str  # what the amount action adds to: "refunded"
    info_field: str  # a fact only the get tool reveals: "seat"
    info_label: str
    info_choices: tuple[str, ...]
    info_questions: tuple[str, ...]  # with {name}
    amount_questions: tuple[str, ...]  # with {name}
    mirror: Mirror
    verify_name: str
    actions: tuple[Action, ...]
    confirmation: ConfirmationRule
    ambiguity: Ambiguity
    benign_notes: tuple[str, ...]
    risks: tuple[RiskNote, ...]
    read_errors: tuple[str, ...]  # what a failing read tool returns
    commit_errors: tuple[str, ...]  # what a failing commit tool returns
    amount_step: int = 5  # seeded amounts are multiples of this (a business pays bonuses in round sums)
    records_per_owner: tuple[int, int] = (2, 5)  # how many records an owner has (a candidate holds few offers)
    owners: tuple[str, ...] = field(default=DEFAULT_OWNERS)

    @property
    def id_arg(self) -> str:
        return f"{self.entity}_id"

    @property
    def find_tool(self) -> str:
        return f"find_{self.collection}"

    @property
    def get_tool(self) -> str:
        return f"get_{self.entity}"

    @property
    def mirror_tool(self) -> str:
        return f"get_{self.mirror.entity}"

    def action(self, name: str) -> Action:
        for action in self.actions:
            if action.name == name:
                return action
        raise KeyError(f"domain {self.name} has no action {name!r}")

    @property
    def amount_action(self) -> Action:
        return next(a for a in self.actions if a.is_amount_action)

    @property
    def status_actions(self) -> tuple[Action, ...]:
        return tuple(a for a in self.actions if not a.is_amount_action)

    def moves_amount(self, action: Action) -> bool:
        """Whether the confirmation policy can apply to the action."""
        return action.is_amount_action or action.moves_record_amount

    def format_amount(self, amount: float) -> str:
        return self.amount_format.format(amount)

    def mirror_id(self, record_id: str) -> str:
        return f"{self.mirror.entity.upper()[:3]}-{record_id}"
