"""What the understanding tier hands back: per part, what it decided or that it falls through.

Every part carries ``decided``: True means the tier is certain and the model need not be
asked for that part; False means the part falls through to the model (``reason`` says why,
for the logs and the benchmark). The shapes mirror what the turn graph and the fact system
consume: facts are the extraction model's ``ExtractedFact`` (``shared.models.extraction``),
``PersonMention.entity_mention()`` its ``EntityMention``, a step's call the planner's
``ToolCall`` (``shared.models.domain``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, Field

from shared.models.base import Strict
from shared.models.domain import ToolCall
from shared.models.extraction import Descriptor, EntityMention, ExtractedFact, Extraction
from shared.models.memory import PersonRole

Label = Literal[
    "greeting", "thanks", "feedback", "person_question", "statement",
    "schedule", "notes", "email", "budget", "research",
]  # fmt: skip
LABELS: tuple[Label, ...] = (
    "greeting", "thanks", "feedback", "person_question", "statement",
    "schedule", "notes", "email", "budget", "research",
)  # fmt: skip
GraphRoute = Literal["greeting", "simple", "complex"]

# The graph's route and the registry's agent (shared/agents/registry.py) of each label.
GRAPH_ROUTE: dict[Label, GraphRoute] = {
    "greeting": "greeting", "thanks": "greeting",
    "person_question": "simple", "statement": "simple",
    "feedback": "complex", "schedule": "complex", "notes": "complex", "email": "complex",
    "budget": "complex", "research": "complex",
}  # fmt: skip
AGENT: dict[Label, str] = {
    "greeting": "greeting", "thanks": "greeting", "feedback": "feedback",
    "person_question": "research", "statement": "research",
    "schedule": "productivity", "notes": "productivity", "email": "productivity",
    "budget": "wealth", "research": "research",
}  # fmt: skip


class RouteDecision(Strict):
    label: Label | None  # None: falls through to the model's classification
    best: Label  # the nearest label, decided or not
    score: float  # similarity of the best label's nearest examples
    margin: float  # best minus the runner-up
    reason: str = ""
    guessed: bool = False  # the label is ``best`` taken below the thresholds (a weak model)

    @property
    def decided(self) -> bool:
        return self.label is not None


class PersonMention(Strict):
    """A person or pet the message names, with their role to the user.

    ``name`` as written ("Anna", or "my boss" when no name is given); ``role`` is the fact
    system's role (someone else's relative is ``other``), None when the message says none;
    ``relation`` the relation word as written ("sister", "friend's sister")."""

    name: str = Field(min_length=1, max_length=80)
    role: PersonRole | None = None
    relation: str | None = Field(default=None, max_length=60)
    named: bool = True  # False: only a relation phrase ("my boss")

    def entity_mention(self) -> EntityMention:
        descriptors = [Descriptor(key="relation", value=self.relation)] if self.relation else []
        return EntityMention(name=self.name, role=self.role, descriptors=descriptors)


class People(Strict):
    decided: bool
    mentions: list[PersonMention] = Field(default_factory=list)
    reason: str = ""


class TimeRef(Strict):
    text: str  # as written: "tomorrow at 10am"
    at: AwareDatetime  # resolved in the user's time zone
    clock: bool  # the message gave a time of day, not only a date
    start: int  # character offsets of ``text`` in the message
    end: int


class Facts(Strict):
    decided: bool
    facts: list[ExtractedFact] = Field(default_factory=list)
    reason: str = ""
    # Not decided: what is certain all the same (who a named relative is), stored when the
    # extraction model reads nothing usable from the message.
    certain: list[ExtractedFact] = Field(default_factory=list)
    # Not decided: each plain sentence as said, in the third person (``said.py``), for a
    # deployment whose extraction model stores junk; never mixed with a model's reading.
    said: list[ExtractedFact] = Field(default_factory=list)

    def extraction(self, people: People) -> Extraction:
        """The extraction model's whole output: these facts and the people named."""
        return Extraction(facts=self.facts, entities=[m.entity_mention() for m in people.mentions])


class Money(Strict):
    amount_minor: int  # in the currency's minor unit (shared.models.money)
    currency: str


class PlannedStep(Strict):
    id: str
    agent: str
    goal: str = Field(min_length=3, max_length=500)
    depends_on: list[str] = Field(default_factory=list)
    call: ToolCall | None = None
    money: Money | None = None  # an amount the call carries, checked in minor units


class Plan(Strict):
    decided: bool
    steps: list[PlannedStep] = Field(default_factory=list)
    reason: str = ""


class Answer(Strict):
    """An extractive answer: the stored facts quoted, never composed."""

    text: str
    fact_ids: list[str]


class Understanding(Strict):
    message: str
    language: str | None = None  # "en" when the tier read the message; None: not read
    route: RouteDecision
    people: People
    times: list[TimeRef] = Field(default_factory=list)
    spans: list[str] = Field(default_factory=list)  # time expressions it left unresolved
    facts: Facts
    plan: Plan
    answer: Answer | None = None
    about_roles: list[PersonRole] = Field(default_factory=list)  # "about my family": whose
    decided_by: Literal["understanding"] = "understanding"

    @property
    def graph_route(self) -> GraphRoute | None:
        return GRAPH_ROUTE[self.route.label] if self.route.label else None

    @property
    def settled(self) -> bool:
        """True: nothing before the reply needs a model (no classify call, no planner
        call). Greetings need neither people nor a plan."""
        route = self.graph_route
        if route is None:
            return False
        if route == "greeting":
            return True
        return self.people.decided and (route != "complex" or self.plan.decided)
