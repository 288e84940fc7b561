"""What a message teaches about people already known: a new alias, a missing descriptor.

A person resolved with confidence under another name ("Tom" for Thomas, "Lisi" for
Elisabeth) gains that name as an alias, so the next message finds them by the exact-name
lookup instead of the fuzzy steps. A descriptor the person lacks (age, employer,
occupation, city) is added; one the person has is never overwritten here: a different
value is what the red-flag check looks at, not something to learn.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.conversation.text import fold
from shared.models.extraction import EntityMention
from shared.models.memory import Person
from shared.services.memory import names
from shared.services.memory.attribution import Attributed
from shared.services.memory.profiles import Mention
from shared.services.memory.resolution import RESOLVED

MAX_ALIASES = 12
LEARNED_DESCRIPTORS = ("age", "employer", "occupation", "city")


def learned_persons(
    attributed: Sequence[Attributed], entities: Sequence[EntityMention]
) -> list[Person]:
    """Known persons updated with what the message says of them; unchanged ones left out."""
    mentions = {fold(e.name): Mention.of(e) for e in entities}
    learned: dict[str, Person] = {}
    for item in attributed:
        resolution = item.resolution
        if resolution.outcome != "person" or resolution.person is None:
            continue
        if resolution.confidence < RESOLVED:
            continue
        person = learned.get(resolution.person.id, resolution.person)
        mention = mentions.get(fold(resolution.mention), Mention(resolution.mention))
        learned[person.id] = _taught(person, mention)
    return [p for p in learned.values() if p != _original(attributed, p.id)]


def _taught(person: Person, mention: Mention) -> Person:
    aliases = list(person.aliases)
    known = {fold(n) for n in [person.display_name, *aliases]}
    name = mention.name.strip()
    if not names.is_proper_name(person.display_name) and names.is_proper_name(name):
        # "Mom", made from "my mom", named at last ("my mother Maria"): the name is shown,
        # the old one stays an alias
        renamed = [person.display_name, *aliases][:MAX_ALIASES]
        person = person.model_copy(update={"display_name": name[:120], "aliases": renamed})
        return _taught_descriptors(person, mention)
    if names.is_proper_name(name) and fold(name) not in known and len(aliases) < MAX_ALIASES:
        aliases.append(name[:120])
    person = person.model_copy(update={"aliases": aliases})
    return _taught_descriptors(person, mention)


def _taught_descriptors(person: Person, mention: Mention) -> Person:
    descriptors = dict(person.descriptors)
    for key in LEARNED_DESCRIPTORS:
        value = mention.descriptors.get(key, "").strip()
        if value and key not in descriptors:
            descriptors[key] = value[:60]
    return person.model_copy(update={"descriptors": descriptors})


def _original(attributed: Sequence[Attributed], person_id: str) -> Person | None:
    return next(
        (
            a.resolution.person
            for a in attributed
            if a.resolution.person is not None and a.resolution.person.id == person_id
        ),
        None,
    )
