"""What a mention and a known person say about themselves, and where the two contradict.

A contradiction ("Martin, 8, my son" vs "Martin, accountant, colleague"; "our dog Max" vs
"Max from work") does not decide anything by itself: it is what makes the resolver ask the
model's red-flag check instead of trusting a name match.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from shared.conversation.relations import Relation
from shared.conversation.text import fold
from shared.models.extraction import EntityMention
from shared.models.memory import THROUGH_OTHERS, Person, PersonRole
from shared.services.memory.names import is_indirect, relation_of

AGE_TOLERANCE = 2  # a stored age goes stale: 8 last year is 9 now
MINOR_AGE = 16  # younger than this: no employer, no occupation, nobody's boss or partner
_ADULT_ROLES = frozenset({"partner", "colleague", "service_provider"})
_DIGITS = re.compile(r"\d{1,3}")


@dataclass(frozen=True)
class Mention:
    """An entity as the message mentions it: the name as written, a role hint, descriptors."""

    name: str
    role: PersonRole | None = None
    descriptors: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, entity: EntityMention) -> Mention:
        descriptors: dict[str, str] = {}
        for item in entity.descriptors:
            descriptors.setdefault(item.key, item.value.strip())
        return cls(entity.name.strip(), entity.role, descriptors)

    @property
    def indirect(self) -> bool:
        """Someone else's relation ("my wife's colleague"): not the user's colleague."""
        return is_indirect(self.descriptors.get("relation", "")) or is_indirect(self.name)

    @property
    def relation(self) -> Relation | None:
        if self.indirect:
            return None
        return relation_of(self.descriptors.get("relation", "")) or relation_of(self.name)

    @property
    def effective_role(self) -> PersonRole | None:
        if self.indirect:
            return self.role if self.role in THROUGH_OTHERS else "other"
        relation = self.relation
        return relation.role if relation else self.role

    def as_person_descriptors(self) -> dict[str, str]:
        kept = {key: value[:60] for key, value in self.descriptors.items() if value}
        relation = self.relation
        if relation is not None:
            kept["relation"] = relation.word
        return kept


def person_relation(person: Person) -> Relation | None:
    return relation_of(person.descriptors.get("relation", ""))


def profile_text(name: str, role: str | None, descriptors: Mapping[str, str]) -> str:
    """One line per individual, for the embedding step and the red-flag prompt."""
    parts = [name] + ([f"role: {role}"] if role else [])
    parts += [f"{key}: {value}" for key, value in sorted(descriptors.items())]
    return "; ".join(parts)


def mention_profile(mention: Mention) -> str:
    return profile_text(mention.name, mention.effective_role, mention.descriptors)


def person_profile(person: Person) -> str:
    return profile_text(person.display_name, person.role_to_user, person.descriptors)


def _age(descriptors: Mapping[str, str]) -> int | None:
    match = _DIGITS.search(descriptors.get("age", ""))
    return int(match.group()) if match else None


def _adult_evidence(role: str | None, descriptors: Mapping[str, str]) -> bool:
    relation = relation_of(descriptors.get("relation", ""))
    return (
        role in _ADULT_ROLES
        or bool(descriptors.get("employer") or descriptors.get("occupation"))
        or (relation is not None and relation.word in ("boss", "employee"))
    )


def _relations_clash(mine: Relation | None, theirs: Relation | None) -> bool:
    if mine is None or theirs is None:
        return False
    if mine.role != theirs.role:
        return True
    if mine.gender and theirs.gender and mine.gender != theirs.gender:
        return True
    return not mine.generic and not theirs.generic and mine.word != theirs.word


def contradiction(mention: Mention, person: Person) -> str | None:
    """Why the mention cannot plainly be this person, or None when nothing contradicts."""
    theirs = person.descriptors
    role = mention.effective_role
    known = person.role_to_user
    if role not in (None, "other") and known not in ("other", role):
        return f"role {role} vs {known}"
    if (role == "pet") != (known == "pet") and (role == "pet" or role not in (None, "other")):
        return f"pet vs person ({role} vs {known})"
    if mention.indirect and (known != "other" or person_relation(person) is not None):
        return "someone else's relation vs the user's own"
    if _relations_clash(mention.relation, person_relation(person)):
        return "relation words differ"
    return _descriptor_clash(mention, person.role_to_user, theirs)


def _descriptor_clash(mention: Mention, known_role: str, theirs: Mapping[str, str]) -> str | None:
    mine = mention.descriptors
    age_mine, age_theirs = _age(mine), _age(theirs)
    both_aged = age_mine is not None and age_theirs is not None
    if both_aged and abs((age_mine or 0) - (age_theirs or 0)) > AGE_TOLERANCE:
        return f"age {age_mine} vs {age_theirs}"
    if age_mine is not None and age_mine < MINOR_AGE and _adult_evidence(known_role, theirs):
        return f"age {age_mine} vs an adult's role or job"
    if (
        age_theirs is not None
        and age_theirs < MINOR_AGE
        and _adult_evidence(mention.effective_role, mine)
    ):
        return f"an adult's role or job vs age {age_theirs}"
    for key in ("employer", "occupation"):
        if mine.get(key) and theirs.get(key) and fold(mine[key]) != fold(theirs[key]):
            return f"{key} {mine[key]} vs {theirs[key]}"
    return None


def evidence(mention: Mention, person: Person) -> int:
    """How many things the mention says that the person matches (tells namesakes apart)."""
    score = 0
    role = mention.effective_role
    if role not in (None, "other") and role == person.role_to_user:
        score += 1
    mine, theirs = mention.relation, person_relation(person)
    if mine is not None and theirs is not None and mine.word == theirs.word:
        score += 1
    age_mine, age_theirs = _age(mention.descriptors), _age(person.descriptors)
    if age_mine is not None and age_theirs is not None:
        score += abs(age_mine - age_theirs) <= AGE_TOLERANCE
    for key in ("employer", "occupation", "city"):
        value = mention.descriptors.get(key)
        score += bool(value) and fold(value or "") == fold(person.descriptors.get(key, ""))
    return score
