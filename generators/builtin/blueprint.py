"""What a builtin domain is made of. A blueprint is data: its actions, policies, notes and the phrase
pools instructions are written from. The generator turns it into tools, code, state and tasks; the
conformance tests in tests/test_domains.py hold every blueprint to the rules written here.

Templates use these slots: {name} a phrase that names one record ("Olga Petrova's booking on flight
LH402 departing 5 March 2027"), {owner}, {key}, {date}, {amount} (formatted with `amount_format`),
{details} (the identifying phrases a clarification adds).
"""

from __future__ import annotations

from dataclasses import dataclass

from abstaingen.model.perturbation import DISCLOSE

__all__ = ["DISCLOSE", "Action", "Ambiguity", "ConfirmationRule", "DetailField", "DomainBlueprint", "KeyField", "Mirror",
           "Naming", "RiskNote", "Undo", "indefinite", "people"]


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
class DetailField:
    """A field a record shows that no task turns on (a trading order's side), for a record as a real system
    holds it; `choices` feed the seeded generator."""

    name: str
    choices: tuple[str | int, ...]


@dataclass(frozen=True)
class Naming:
    """Phrase pools for naming a record by its owner and some of its details (each starts with a space)."""

    heads: tuple[str, ...]  # "{owner}'s booking"
    key: tuple[str, ...]  # " on flight {key}"
    date: tuple[str, ...]  # " departing {date}"
    month: tuple[str, ...]  # " departing in {month}"
    clarifications: tuple[str, ...]  # "I mean the one{details}."


FIRST_NAMES = (
    "Ana", "Ben", "Chen", "Dana", "Elif", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kavya", "Luis", "Maya", "Nils",
    "Olga", "Priya", "Quentin", "Rosa", "Samir", "Tove", "Uma", "Victor", "Wen", "Yusuf", "Zofia", "Aiko", "Bruno",
    "Carmen", "Declan", "Esther", "Femi", "Greta", "Hamid", "Isla", "Jakub", "Keanu", "Leila", "Marco", "Noor",
    "Oskar", "Paula", "Rahul", "Sofia", "Tomas", "Ursula", "Vikram", "Wanjiru", "Xavier", "Yara", "Zane", "Amara",
    "Bilal", "Clara", "Dmitri", "Emeka", "Fatima", "Gustavo", "Hana", "Ivan", "Julia", "Kenji", "Lucia", "Mateo",
    "Nadia", "Omar", "Petra", "Ravi", "Sara", "Thabo", "Valentina", "Walter", "Ximena", "Yosef", "Zara", "Alice",
    "Arjun", "Beatriz", "Camille", "Diego", "Eva", "Finn", "Gabriel", "Helena", "Ibrahim", "Joanna", "Kofi", "Lars",
    "Mei", "Nikolai", "Oliver", "Pilar", "Rania", "Stefan", "Tariq", "Vera", "William",
)

SURNAMES = (  # slices of 12, one per domain (see people): nobody recurs across domains
    "Lima", "Okafor", "Kowalski", "Demir", "Haddad", "Mensah", "Tanaka", "Moreau", "Berg", "Rao", "Ortega", "Cohen",
    "Andersen", "Petrova", "Nair", "Blake", "Jimenez", "Patel", "Lindqvist", "Krishnan", "Dubois", "Zhou", "Adeyemi",
    "Nowak", "Sato", "Costa", "Ruiz", "Murphy", "Levi", "Adebayo", "Huber", "Karimi", "MacLeod", "Horak", "Makoa",
    "Nasser", "Bianchi", "Hassan", "Lund", "Fernandes", "Ivanova", "Schmidt", "Yilmaz", "Kim", "Nguyen", "Silva",
    "Novak", "Papadopoulos", "Jansen", "Virtanen", "Ahmed", "Kaur", "Mwangi", "Osei", "Reyes", "Santos", "Tran",
    "Walsh", "Yamamoto", "Zielinski", "Abbasi", "Bauer", "Castillo", "Dimitrov", "Eriksen", "Fischer", "Gallo",
    "Hoang", "Iqbal", "Jovanovic", "Kuznetsova", "Laurent", "Mahlangu", "Nakamura", "O'Brien", "Pereira", "Quispe",
    "Rossi", "Suzuki", "Tshabalala", "Ueda", "Vargas", "Weber", "Xu", "Yadav", "Zapata", "Alvarez", "Brennan",
    "Chaudhry", "Dlamini", "Esposito", "Fontaine", "Gonzaga", "Halvorsen", "Ishikawa", "Janssen", "Kovac",
    "Lopez", "Moyo", "Nilsson", "Ozturk", "Pham", "Rahman", "Sorensen", "Takahashi", "Umar", "Vasquez", "Wojcik",
    "Yoon", "Zimmermann", "Acheampong", "Bergstrom", "Cardoso", "Duarte", "Engel", "Farouk", "Gruber", "Hakimi",
    "Ionescu", "Jung", "Kaplan", "Lehmann", "Marino", "Ndlovu", "Oyelaran", "Park", "Richter", "Sandoval", "Toth",
    "Ustinov", "Varga", "Wallace", "Yeo", "Zhang", "Asante", "Bhatt", "Chua", "Delgado", "Ekström", "Fitzgerald",
    "Garcia", "Hartmann", "Ismail", "Jaramillo", "Keller", "Lam", "Mendes", "Nieminen", "Okoye", "Popescu",
    "Romero", "Shah", "Takeda", "Uchenna", "Villanueva", "Winter", "Yilmazer", "Zamora", "Aziz", "Boateng",
    "Carvalho", "Dahl", "Eze", "Fuentes", "Gómez", "Horvat", "Ito", "Jain",
)
SURNAMES_PER_DOMAIN = 12


def people(slot: int) -> tuple[str, ...]:
    """The people of one domain: every first name with each surname of the domain's own slice, so that no
    person appears in two domains (slot: the domain's place among the builtin domains)."""
    slices = len(SURNAMES) // SURNAMES_PER_DOMAIN
    surnames = SURNAMES[slot % slices * SURNAMES_PER_DOMAIN:][:SURNAMES_PER_DOMAIN]
    return tuple(f"{first} {last}" for last in surnames for first in FIRST_NAMES)


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
    system: str  # "the reservation system": what a service error names
    amount_step: int = 5  # seeded amounts are multiples of this (a business pays bonuses in round sums)
    records_per_owner: tuple[int, int] = (2, 5)  # how many records an owner has (a candidate holds few offers)
    owners: tuple[str, ...] = ()  # the account holders' names; empty: people drawn from the domain's own pool
    past_dates: bool = False  # record dates lie behind "today" (issued, created, opened) rather than ahead of it
    shared_keys: bool = True  # an owner may hold two records on one key (two bookings on one flight)
    details: tuple[DetailField, ...] = ()  # more fields each record shows

    @property
    def closing_action(self) -> Action:
        """The irreversible status action that closed an owner's older record (its history)."""
        return next(a for a in self.status_actions if a.undo is None and a.new_status)

    @property
    def closed_status(self) -> str:
        return self.closing_action.new_status or ""

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
