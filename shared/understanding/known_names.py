"""The people the user has told about, found however their names are typed next time:
"what does luca do?" names Luca when Luca is one of the user's contacts, though a lowercase
word no rule would take for a name. Only single-word names, and only where a word stands
as a name would (never a verb, a preposition or a pronoun, nor after an article or "my": a
contact called Will is not "will", Bill not "the bill"); the turn's resolver then finds the
person by name, as for "Luca".
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from shared.understanding.casual_names import common_word
from shared.understanding.result import PersonMention

if TYPE_CHECKING:
    from spacy.tokens import Doc

    from shared.understanding.people import Found

_NOT_A_NAME = frozenset({"VERB", "AUX", "ADP", "DET", "PRON", "CCONJ", "SCONJ", "PART", "NUM"})


_WORD = re.compile(r"[^\W\d_]+")
_BEFORE_A_THING = frozenset({"the", "a", "an", "my", "your", "his", "her", "our", "their", "this"})


def as_known(text: str, known: tuple[str, ...]) -> str:
    """``text`` with the user's people's names typed in lower case capitalised, so that the
    parser reads them as names ("what does tom do?" tagged "tom" a verb). Not a word that is
    more often a verb, adjective or adverb ("will", "grace"), nor after "the" or "my" ("the
    bill"). Same length: offsets hold for ``text``."""
    names = {
        name.casefold() for name in known if name.isalpha() and not common_word(name.casefold())
    }
    if not names:
        return text
    chars, before = list(text), ""
    for word in _WORD.finditer(text):
        said = word.group()
        if said.islower() and said in names and before not in _BEFORE_A_THING:
            chars[word.start()] = said[0].upper()
        before = said.casefold()
    return "".join(chars)


def with_known(doc: Doc, found: Found, known: tuple[str, ...]) -> Found:
    """``found`` with the user's known names as typed in ``doc`` added."""
    names = {name.casefold(): name for name in known if " " not in name.strip()}
    for token in doc:
        name = names.get(token.text.casefold())
        if name is None or token.i in found.by_token or token.pos_ in _NOT_A_NAME:
            continue
        before = doc[token.i - 1] if token.i > 0 else None
        if before is not None and (before.pos_ in ("DET", "ADJ") or before.tag_ == "PRP$"):
            continue  # "the bill", "my rose garden": a thing, whoever Bill and Rose are
        found.add(PersonMention(name=name), [token])
        # one of the user's people: no longer a name no rule placed (that left the people
        # undecided, and a production turn asked the model who "maria" is)
        found.unplaced = [t for t in found.unplaced if t.i != token.i]
    return found


def names_known(found: Found, known: tuple[str, ...]) -> bool:
    """Whether the message names one of the user's people."""
    return any(mention.name in known for mention in found.mentions)
