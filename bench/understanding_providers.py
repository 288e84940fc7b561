"""The providers bench/understanding.py compares: the tier, a model through the LLM port,
and the tier with the model behind it for what falls through.

The model column asks what the product asks today: one classification call before the
reply (here with the tier's labels, so routes compare) and the extraction task's own
prompt and schema for facts. A model that breaks its schema twice counts as saying nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from pydantic import BaseModel, Field

from scripts.stacklib import tokens
from scripts.stacklib.profile import Profile
from shared.adapters.local_embedder import LocalEmbedder
from shared.config import Settings
from shared.conversation.greetings import is_plain_greeting
from shared.deps.models import build_models
from shared.errors import ModelOutputInvalid
from shared.models.extraction import Extraction
from shared.models.memory import PersonRole
from shared.ports import LLM, ChatTurn, LLMRequest
from shared.services.memory.prompt import extraction_prompt
from shared.services.structured import structured_with_retry
from shared.understanding.result import Label, Understanding
from shared.understanding.tier import Context, UnderstandingTier
from testkit.understanding_eval import Prediction, from_understanding

_CLASSIFY = (
    "Classify the user's message for a personal assistant. label: greeting, thanks, "
    "feedback (about the assistant), person_question (a question about the user or people "
    "they know), statement (tells facts about the user or people they know), schedule "
    "(reminders and calendar), notes, email, budget (budgets and expenses) or research "
    "(find or explain something). people: every person or pet named in the message, with "
    "their role to the user: partner, child, parent, sibling, grandparent, grandchild, "
    "aunt_uncle, cousin, niece_nephew, in_law, friend, colleague, pet, service_provider, "
    "other (someone else's relative), or null."
)


class Provider(Protocol):
    def warm_up(self) -> None: ...

    def predict(self, text: str, context: Context) -> Prediction: ...


class NamedPerson(BaseModel):
    name: str = Field(min_length=1, max_length=60)
    role: PersonRole | None = None


class Reading(BaseModel):
    label: Label
    people: list[NamedPerson] = Field(default_factory=list, max_length=4)


class TierProvider:
    def __init__(self, guess: bool = False) -> None:
        self.tier = UnderstandingTier(LocalEmbedder())
        self.guess = guess  # the open route guessed (MODEL_STRENGTH=weak)

    def warm_up(self) -> None:
        self.tier.load()

    def understand(self, text: str, context: Context) -> tuple[Understanding, float]:
        started = time.perf_counter()
        understanding = self.tier.understand(text, context, guess=self.guess)
        return understanding, (time.perf_counter() - started) * 1000

    def predict(self, text: str, context: Context) -> Prediction:
        understanding, ms = self.understand(text, context)
        prediction = from_understanding(understanding)
        prediction.ms = ms
        return prediction


def local_model() -> LLM:
    """SmolLM2 on the test stack's local model service, through the production adapter."""
    profile = Profile("test")
    env = profile.model_env(tokens.model_token(profile.state))
    settings = Settings(
        env="test",
        model_provider="vertex",
        vertex_base_url=env["VERTEX_BASE_URL"],
        vertex_access_token=env["VERTEX_ACCESS_TOKEN"],
        **Settings.one_model(env["VERTEX_MODEL"]),
        vertex_embedding_model=env["VERTEX_EMBEDDING_MODEL"],
        embedding_dimension=int(env["EMBEDDING_DIMENSION"]),
    )
    return build_models(settings)[0]


class ModelProvider:
    def __init__(self, llm: LLM | None = None) -> None:
        self.llm = llm or local_model()

    def warm_up(self) -> None:
        self.classify("hello")

    def classify(self, text: str) -> Reading | None:
        request = LLMRequest(
            system=_CLASSIFY,
            messages=[ChatTurn(role="user", text=text)],
            max_output_tokens=200,
            temperature=0.0,
        )
        try:
            return structured_with_retry(self.llm, request, Reading)[0]
        except ModelOutputInvalid:
            return None

    def extract(self, text: str) -> list[tuple[str, str]]:
        prompt = extraction_prompt(text, [], {None: "user"}, has_preferences=True)
        try:
            extraction = structured_with_retry(self.llm, prompt.request, Extraction)[0]
        except ModelOutputInvalid:
            return []
        return [(fact.about, fact.text) for fact in extraction.facts]

    def predict(self, text: str, context: Context) -> Prediction:
        started = time.perf_counter()
        if is_plain_greeting(text):  # the product's rule: no model call
            return Prediction(route="greeting", people=[], facts=[], settled=True)
        reading = self.classify(text)
        facts = self.extract(text)
        return Prediction(
            route=reading.label if reading else None,
            people=[(p.name, p.role) for p in reading.people] if reading else [],
            facts=facts,
            ms=(time.perf_counter() - started) * 1000,
        )


class TierThenModel:
    def __init__(self, guess: bool = False) -> None:
        self.tier = TierProvider(guess)
        self.model = ModelProvider()

    def warm_up(self) -> None:
        self.tier.warm_up()
        self.model.warm_up()

    def predict(self, text: str, context: Context) -> Prediction:
        understanding, ms = self.tier.understand(text, context)
        prediction = from_understanding(understanding)
        started = time.perf_counter()
        if prediction.route is None or prediction.people is None:
            reading = self.model.classify(text)
            prediction.route = prediction.route or (reading.label if reading else None)
            if prediction.people is None:
                prediction.people = [(p.name, p.role) for p in reading.people] if reading else []
        if prediction.facts is None:
            prediction.facts = self.model.extract(text)
        prediction.ms = ms + (time.perf_counter() - started) * 1000
        return prediction


PROVIDERS: dict[str, Callable[[], Provider]] = {
    "tier": TierProvider,
    "local": ModelProvider,
    "tier+local": TierThenModel,
    # what make dev runs: the open route guessed, the model for people and facts left open
    "tier+guess": lambda: TierProvider(guess=True),
    "tier+guess+local": lambda: TierThenModel(guess=True),
}
