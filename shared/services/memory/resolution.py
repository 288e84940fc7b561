"""Entity resolution: which of the user's persons a mention means, cheapest evidence first.

The cascade, each step yielding a confidence (>= 0.8 resolves):
1. the turn's own resolution of the mention (its confidence, if >= 0.8; or "someone new",
   when the user answered a disambiguation question that way);
2. exact display name or alias through the keyed-hash lookup (0.95; namesakes told apart by
   role and descriptors: 0.85);
3. a role reference, for a mention without a name ("my boss": 0.9 when exactly one person has
   that relation word; "my partner": 0.85 when exactly one person has that role);
4. fuzzy names: diminutives (Tom/Thomas: 0.85), a first name of a full name (0.85), one typo
   in a long name (0.8), weaker likenesses as candidates only (0.6);
5. embedding similarity of profiles, to break a tie between namesakes (0.8);
6. the model's red-flag check, only when a candidate's descriptors contradict the mention's.
Never guessed: a pronoun without the turn's resolution is skipped; a named mention with a
role and no candidate becomes a new person, and so does an unnamed one-of-a-kind relative
("my mom": "Mom", who takes the name the user gives later); anything else is ambiguous and
held pending.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from shared.conversation.text import fold
from shared.errors import ModelOutputInvalid
from shared.models.domain import ResolvedEntity
from shared.models.memory import Person
from shared.ports import LLM, ContactStore, Embedder, FactStore
from shared.services.memory import names
from shared.services.memory.profiles import (
    Mention,
    contradiction,
    evidence,
    mention_profile,
    person_profile,
    person_relation,
)
from shared.services.memory.prompt import known_facts, red_flag_request
from shared.services.memory.schema import RedFlagVerdict
from shared.services.structured import structured_with_retry

log = logging.getLogger("extraction")

RESOLVED = 0.8
EXACT, NAMESAKE, NEW_PERSON = 0.95, 0.85, 0.9
ROLE_WORD, ROLE_GENERIC, ROLE_WEAK = 0.9, 0.85, 0.6
NICKNAME, FIRST_NAME, NICKNAME_FIRST, TYPO, LIKENESS = 0.85, 0.85, 0.8, 0.8, 0.6
EMBEDDING = 0.8
EMBEDDING_MIN, EMBEDDING_MARGIN = 0.5, 0.12  # see tests/unit/test_memory_resolution.py
MAX_CANDIDATES = 5  # bounds the red-flag calls per mention
RED_FLAG_FACTS = 5  # of a candidate's facts, shown to the red-flag check
GENDERED_ENDINGS = frozenset({"a", "e", "s", "o", "ie", "ina", "ine", "ette"})

Outcome = Literal["user", "person", "new", "ambiguous", "skip"]


@dataclass(frozen=True)
class Resolution:
    outcome: Outcome
    mention: str
    person: Person | None = None  # resolved, created, or proposed (ambiguous, named)
    confidence: float = 0.0
    candidate_ids: tuple[str, ...] = ()
    step: str = ""


@dataclass(frozen=True)
class Scored:
    person: Person
    confidence: float
    step: str


FactsOf = Callable[[str], list[str]]  # a person's current fact texts, for the red-flag prompt


def red_flag_facts(facts: FactStore, user_id: str) -> FactsOf:
    """What the red-flag check knows of a candidate: their most recently seen current facts
    (read only when the check runs, which is rare)."""

    def facts_of(person_id: str) -> list[str]:
        current = facts.current_facts(user_id, [person_id])
        return [fact.text for fact in known_facts(current, RED_FLAG_FACTS)]

    return facts_of


class Resolver:
    """Resolves the mentions of one message for one user; persons are listed at most once."""

    def __init__(
        self,
        user_id: str,
        contacts: ContactStore,
        embedder: Embedder,
        llm: LLM,
        facts_of: FactsOf,
        turn_entities: Sequence[ResolvedEntity],
        message: str,
        new_id: Callable[[str], str] = lambda _: str(uuid.uuid4()),
    ) -> None:
        self._user_id = user_id
        self._contacts = contacts
        self._embedder = embedder
        self._llm = llm
        self._facts_of = facts_of
        self._turn = {fold(e.mention): e for e in turn_entities}
        self._message = message
        self._new_id = new_id
        self._persons: list[Person] | None = None

    def resolve(self, mention: Mention) -> Resolution:
        turn = self._turn.get(fold(mention.name))
        if decided := self._decided(mention, turn):
            return decided
        candidates = self._turn_step(turn)
        if not candidates and names.is_pronoun(mention.name):
            return Resolution("skip", mention.name, step="pronoun")
        candidates = candidates or self._exact(mention) or self._by_role(mention)
        candidates = candidates or self._fuzzy(mention)
        if len(candidates) > MAX_CANDIDATES:
            return self._ambiguous(mention, candidates)
        if len(candidates) > 1:
            candidates = self._discriminate(mention, candidates)
        checked = [kept for c in candidates if (kept := self._red_flag(mention, c)) is not None]
        if not checked:
            return self._new_or_ambiguous(mention)  # nobody, or everybody ruled out
        if len(checked) == 1 and checked[0].confidence >= RESOLVED:
            best = checked[0]
            if len(candidates) > 1:  # the last namesake standing: no surer than a namesake
                best = replace(best, confidence=min(best.confidence, NAMESAKE))
            return Resolution("person", mention.name, best.person, best.confidence, step=best.step)
        return self._ambiguous(mention, checked)

    def _decided(self, mention: Mention, turn: ResolvedEntity | None) -> Resolution | None:
        """The user themself, or someone new as the user said when asked."""
        if turn and turn.new_person:
            return Resolution("new", mention.name, self._proposed(mention), NEW_PERSON, step="turn")
        if names.is_self(mention.name) or (
            turn and turn.person_id is None and turn.confidence >= RESOLVED
        ):
            return Resolution("user", mention.name, confidence=1.0, step="self")
        return None

    # -- the cascade -------------------------------------------------------------------------
    def _turn_step(self, turn: ResolvedEntity | None) -> list[Scored]:
        if turn is None or turn.person_id is None or turn.confidence < RESOLVED:
            return []
        person = self._contacts.get_person(self._user_id, turn.person_id)
        return [Scored(person, turn.confidence, "turn")] if person else []

    def _exact(self, mention: Mention) -> list[Scored]:
        found = self._contacts.find_by_name(self._user_id, mention.name)
        return [Scored(person, EXACT, "exact") for person in found]

    def _by_role(self, mention: Mention) -> list[Scored]:
        relation = mention.relation
        if relation is None:
            return []
        if names.is_proper_name(mention.name):  # "my mother Maria" and the user's "Mom"
            return self._named_by_relation(mention, relation.word)
        same_role = [p for p in self._all() if p.role_to_user == relation.role]
        same_word = [p for p in same_role if _word(p) == relation.word]
        if same_word:
            confidence = ROLE_WORD if len(same_word) == 1 else ROLE_WEAK
            return [Scored(p, confidence, "role") for p in same_word]
        if relation.generic:
            confidence = ROLE_GENERIC if len(same_role) == 1 else ROLE_WEAK
            return [Scored(p, confidence, "role") for p in same_role]
        # "my sister" and a sibling whose relation word is unknown: maybe, never for sure.
        return [
            Scored(p, ROLE_WEAK, "role")
            for p in same_role
            if contradiction(mention, p) is None and _word(p) is None
        ]

    def _named_by_relation(self, mention: Mention, word: str) -> list[Scored]:
        """The one person known only by this one-of-a-kind relation ("Mom", made when the
        user said "my mom lives in Lyon"), now that the user names them."""
        if word not in names.ONE_OF_A_KIND:
            return []
        known = [
            p for p in self._all() if _word(p) == word and not names.is_proper_name(p.display_name)
        ]
        return [Scored(known[0], ROLE_WORD, "role")] if len(known) == 1 else []

    def _fuzzy(self, mention: Mention) -> list[Scored]:
        if not names.is_proper_name(mention.name):
            return []
        scored = [
            Scored(person, score, "fuzzy")
            for person in self._all()
            if (score := max(name_likeness(mention.name, n) for n in _names(person))) > 0
        ]
        scored.sort(key=lambda s: s.confidence, reverse=True)
        if len(scored) > 1 and scored[0].confidence - scored[1].confidence >= 0.15:
            return scored[:1]
        return scored

    def _discriminate(self, mention: Mention, candidates: list[Scored]) -> list[Scored]:
        """Namesakes: keep the one the mention's role and descriptors point at, if any."""
        fitting = [c for c in candidates if contradiction(mention, c.person) is None]
        points = {c.person.id: evidence(mention, c.person) for c in fitting}
        top = max(points.values(), default=0)
        leaders = [c for c in fitting if points[c.person.id] == top]
        if top > 0 and len(leaders) == 1:
            return [replace(leaders[0], confidence=min(leaders[0].confidence, NAMESAKE))]
        pool = fitting if len(fitting) > 1 else candidates
        best = self._closest_profile(mention, pool)
        return [best] if best else candidates

    def _closest_profile(self, mention: Mention, pool: list[Scored]) -> Scored | None:
        if not mention.descriptors and mention.effective_role is None:
            return None  # a bare name: any profile similarity would be noise
        texts = [mention_profile(mention), *(person_profile(c.person) for c in pool)]
        first, *others = self._embedder.embed(texts)
        similarity = [sum(a * b for a, b in zip(first, v, strict=True)) for v in others]
        ranked = sorted(zip(similarity, pool, strict=True), key=lambda x: x[0], reverse=True)
        (best_sim, best), (second_sim, _) = ranked[0], ranked[1]
        if best_sim >= EMBEDDING_MIN and best_sim - second_sim >= EMBEDDING_MARGIN:
            return replace(best, confidence=min(best.confidence, EMBEDDING), step="embedding")
        return None

    def _red_flag(self, mention: Mention, candidate: Scored) -> Scored | None:
        """The candidate as is, confirmed by the model, or None when ruled out."""
        reason = contradiction(mention, candidate.person)
        if reason is None:
            return candidate
        request = red_flag_request(
            person_profile(candidate.person),
            self._facts_of(candidate.person.id),
            mention_profile(mention),
            self._message,
        )
        try:
            verdict, _ = structured_with_retry(self._llm, request, RedFlagVerdict)
        except ModelOutputInvalid:
            verdict = RedFlagVerdict(same_person=False, confidence=0.0, reason="no verdict")
        # The reason names ages and employers: plaintext stays out of the logs.
        log.info("red flag", extra={"same": verdict.same_person, "sure": verdict.confidence})
        if verdict.confidence < RESOLVED:
            return replace(candidate, confidence=min(candidate.confidence, 0.5), step="red_flag")
        if not verdict.same_person:
            return None
        confidence = min(candidate.confidence, verdict.confidence)
        return replace(candidate, confidence=confidence, step="red_flag")

    # -- outcomes ----------------------------------------------------------------------------
    def _new_or_ambiguous(self, mention: Mention) -> Resolution:
        relation = mention.relation
        if not names.is_proper_name(mention.name):
            if relation is None or relation.word not in names.ONE_OF_A_KIND:
                return Resolution("skip", mention.name, step="unnamed")
            # "my mom lives in Lyon": the user has one, known as "Mom" until named
            person = self._proposed(replace(mention, name=names.called_by(mention.name)))
            return Resolution("new", mention.name, person, NEW_PERSON, step="new_by_relation")
        person = self._proposed(mention)
        if mention.effective_role not in (None, "other") or mention.descriptors.get("relation"):
            return Resolution("new", mention.name, person, NEW_PERSON, step="new")
        return Resolution("ambiguous", mention.name, person, step="no_role")

    def _ambiguous(self, mention: Mention, candidates: Sequence[Scored]) -> Resolution:
        proposed = self._proposed(mention) if names.is_proper_name(mention.name) else None
        ids = tuple(dict.fromkeys(c.person.id for c in candidates))
        best = max((c.confidence for c in candidates), default=0.0)
        return Resolution("ambiguous", mention.name, proposed, min(best, 0.79), ids, "ambiguous")

    def _proposed(self, mention: Mention) -> Person:
        return Person(
            id=self._new_id(mention_profile(mention)),  # namesakes of one message differ
            user_id=self._user_id,
            display_name=mention.name[:120],
            role_to_user=mention.effective_role or "other",
            descriptors=mention.as_person_descriptors(),
        )

    def _all(self) -> list[Person]:
        if self._persons is None:
            self._persons = self._contacts.list_persons(self._user_id)
        return self._persons


def _names(person: Person) -> list[str]:
    return [person.display_name, *person.aliases]


def _word(person: Person) -> str | None:
    relation = person_relation(person)
    return relation.word if relation else None


def name_likeness(written: str, known: str) -> float:
    """How likely a written name means a known one, from spelling alone."""
    a, b = fold(written), fold(known)
    if not a or not b:
        return 0.0
    if a == b or names.nickname_match(a, b):
        return EXACT if a == b else NICKNAME
    if (" " in a) != (" " in b):  # "Thomas" and "Thomas Müller"
        first_a, first_b = a.split()[0], b.split()[0]
        if first_a == first_b or names.nickname_match(first_a, first_b):
            return FIRST_NAME if first_a == first_b else NICKNAME_FIRST
        return 0.0
    return _spelling(a, b)


def _spelling(a: str, b: str) -> float:
    shorter, longer = sorted((a, b), key=len)
    if longer.startswith(shorter) and longer[len(shorter) :] in GENDERED_ENDINGS:
        return 0.0  # Martin/Martina, Andrea/Andreas: another person, not a typo
    distance = names.edit_distance(a, b)
    if distance == 1:
        return TYPO if min(len(a), len(b)) >= 5 else LIKENESS
    return LIKENESS if distance == 2 and min(len(a), len(b)) >= 8 else 0.0
