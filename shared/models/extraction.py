"""What extraction reads from one message: facts, the people it mentions, topics.

The shape of the extraction model's structured output, and of what the deterministic
understanding tier reads whole (``shared.understanding``), so the fact system attributes
both the same way. Every array and free string is bounded so a weak local model cannot loop
inside the JSON grammar. Fields the model gets wrong in meaning (a malformed date, an
unknown ``replaces`` ref) are checked in code and ignored, not rejected: one bad field must
not drop the turn.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from shared.models.base import NO_TRIM, Strict
from shared.models.memory import Durability, FactType, PersonRole, Sensitivity

MAX_FACTS = 10
MAX_ENTITIES = 8
MAX_TOPICS = 5
MAX_DESCRIPTORS = 6

Topic = Annotated[str, Field(min_length=1, max_length=40)]
DescriptorKey = Literal["age", "employer", "occupation", "city", "relation"]


class Descriptor(Strict):
    """One thing that tells people of one name apart: ("age", "8"), ("relation", "son")."""

    key: DescriptorKey
    value: str = Field(min_length=1, max_length=60)


class ExtractedFact(Strict):
    text: str = Field(min_length=1, max_length=200)
    type: FactType
    about: str = Field(min_length=1, max_length=80)  # "user", or the mention as written
    confidence: float = Field(ge=0.0, le=1.0)
    sensitivity: Sensitivity = "low"
    durability: Durability = "durable"
    temporal_marker: str | None = Field(default=None, max_length=60)  # "next Friday"
    date: str | None = Field(default=None, max_length=10)  # ISO date, if known
    replaces: str | None = Field(
        default=None, max_length=8, json_schema_extra={NO_TRIM: True}
    )  # a known fact's ref: "F3"


class EntityMention(Strict):
    name: str = Field(min_length=1, max_length=80)  # as written: "Martin", "my boss"
    role: PersonRole | None = None
    descriptors: list[Descriptor] = Field(default_factory=list, max_length=MAX_DESCRIPTORS)


class Extraction(Strict):
    facts: list[ExtractedFact] = Field(default_factory=list, max_length=MAX_FACTS)
    entities: list[EntityMention] = Field(default_factory=list, max_length=MAX_ENTITIES)
    topics: list[Topic] = Field(default_factory=list, max_length=MAX_TOPICS)
