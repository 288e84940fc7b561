"""People and their roles: "my sister Anna", "Anna, my colleague", "our dog Rex".

spaCy's entity recognizer finds names; a ``Matcher`` finds a relation noun followed by
names ("my sisters Anna and Eva"), the parse finds the other shapes ("Anna, my colleague",
"Anna is my sister", "a son named Leo") and the relation's owner: "my"/"our" make it the
user's relation, anyone else's ("my friend's sister", "his wife") makes the person
``other``. A capitalised word the rules cannot place (a name the recognizer missed, a
relation without an owner) leaves the part undecided: it falls through to the model.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shared.conversation.relations import TIER_RELATIONS
from shared.models.money import CURRENCIES
from shared.understanding.casual_names import (
    OWNING_VERBS,
    as_written,
    at_work,
    department_of,
    in_law,
    known_lowercase_name,
    lone_lowercase_name,
    lowercase_name,
    named_by,
    not_a_person,
)
from shared.understanding.kin import Held, compose
from shared.understanding.lexicon import (
    CURRENCY_WORDS,
    DOUBTFUL_MODIFIERS,
    KEPT_MODIFIERS,
    OTHER_OWNERS,
    TITLE_WORDS,
    USER_OWNERS,
)
from shared.understanding.result import People, PersonMention
from shared.understanding.times import DAY_NAMES

if TYPE_CHECKING:  # spaCy loads with the pipeline, on first use (nlp.py)
    from spacy.matcher import Matcher
    from spacy.tokens import Doc, Token
    from spacy.vocab import Vocab

NOT_PEOPLE = frozenset(
    {"GPE", "LOC", "ORG", "NORP", "FAC", "DATE", "TIME", "MONEY", "CARDINAL", "ORDINAL",
     "QUANTITY", "PERCENT", "EVENT", "PRODUCT", "WORK_OF_ART", "LANGUAGE", "LAW"}
)  # fmt: skip
NOT_NAMES = frozenset({"DATE", "TIME", "MONEY", "CARDINAL", "ORDINAL", "QUANTITY", "PERCENT"})
# Verbs a request to contact someone starts with, capitalised as the first word.
_COMMAND_WORDS = frozenset(
    {"email", "mail", "call", "phone", "text", "message", "ask", "tell", "remind", "invite"}
)
# A single-word "organisation" or "place" in these positions may be a missed name.
_PERSON_SLOTS = frozenset({"nsubj", "nsubjpass", "appos", "poss", "dobj"})


@dataclass
class Found:
    """The mentions, and which tokens stand for which mention (for the facts' subjects)."""

    mentions: list[PersonMention] = field(default_factory=list)
    by_token: dict[int, PersonMention] = field(default_factory=dict)
    doubts: list[str] = field(default_factory=list)
    unplaced: list[Token] = field(default_factory=list)  # maybe names no rule placed
    shared: set[int] = field(default_factory=set)  # tokens of several people: "my parents"
    held: dict[str, Held] = field(default_factory=dict)  # relatives of the user's people

    def compose(self) -> None:
        """Give a person held by one of the user's people the role they make (``kin``)."""
        self.held = compose(self.mentions)
        for name, held in self.held.items():
            was = next(m for m in self.mentions if m.name == name)
            self.mentions = [held.person if m is was else m for m in self.mentions]
            self.by_token = {i: held.person if m is was else m for i, m in self.by_token.items()}

    def add(self, mention: PersonMention, tokens: list[Token]) -> None:
        known = next((m for m in self.mentions if m.name == mention.name), None)
        if known is not None and known != mention:
            self.doubts.append(f"{mention.name} named twice with different roles")
        if known is None:
            self.mentions.append(mention)
        for token in tokens:
            if self.by_token.get(token.i, known or mention) != (known or mention):
                self.shared.add(token.i)
            self.by_token[token.i] = known or mention

    def lone_name(self, token: Token) -> bool:
        """A name no rule placed that a guess takes for a person (``result``)."""
        return any(t.i == token.i for t in self.unplaced) and _alone(token)

    def result(self, guess: bool = False) -> People:
        """``guess``: decide despite doubts, for a model that finds people worse than this
        guess does: names no rule placed count as people of no known role when each is a
        word alone ("What does Eva like?"), never when several stand together ("The Magic
        Mountain"); the other doubts keep what the rules found."""
        names = list(dict.fromkeys(as_written(t.text) for t in self.unplaced))
        doubts = [*self.doubts, *(f"unplaced name {name!r}" for name in names)]
        if not doubts:
            return People(decided=True, mentions=self.mentions)
        if not guess:
            return People(decided=False, mentions=self.mentions, reason="; ".join(doubts))
        lone = {as_written(t.text) for t in self.unplaced if _alone(t) and not not_a_person(t)}
        lone -= {m.name for m in self.mentions}
        guessed = [PersonMention(name=name) for name in names if name in lone]
        reason = "guessed despite: " + "; ".join(doubts)
        return People(decided=True, mentions=[*self.mentions, *guessed], reason=reason)


def asked_about(found: Found, name: str, guess: bool) -> People:
    """People of a question that names whom it asks about ("where does luca work?"): that
    name is a person, whatever the recognizer made of it; other doubts stand."""
    words = {w.casefold() for w in name.split()}
    rest = [t for t in found.unplaced if t.lower_ not in words]
    others = Found(found.mentions, found.by_token, found.doubts, rest, found.shared)
    people = others.result(guess)
    if not people.decided or any(m.name.casefold() == name.casefold() for m in people.mentions):
        return people
    return people.model_copy(update={"mentions": [*people.mentions, PersonMention(name=name)]})


def _relation_matcher(doc: Doc) -> Matcher:
    return _relation_matcher_of(doc.vocab)


@functools.lru_cache(maxsize=4)  # one per pipeline's vocabulary: built once, ~1 ms each
def _relation_matcher_of(vocab: Vocab) -> Matcher:
    from spacy.matcher import Matcher

    matcher = Matcher(vocab)
    relation = {"LOWER": {"IN": list(TIER_RELATIONS)}, "POS": {"IN": ["NOUN", "PROPN"]}}
    name = {"IS_TITLE": True, "POS": "PROPN"}
    matcher.add("RELATION_NAMES", [[relation, name, {**name, "OP": "*"}]], greedy="LONGEST")
    return matcher


def find_people(doc: Doc) -> Found:
    found = Found()
    # relation noun -> the end of the names right after it ("sisters Anna and Eva")
    runs = {start: end for _, start, end in _relation_matcher(doc)(doc)}
    for token in doc:
        if in_law(token):  # "my sister-in-law Petra": the parts are tokens of their own
            _in_law(doc, token, found)
        elif token.lower_ in TIER_RELATIONS and (
            token.pos_ in ("NOUN", "PROPN") or _relation_as_modifier(token)
        ):  # "my grandpa otto": grandpa may be tagged an adjective
            _relation(doc, token, found, runs)
    for ent in doc.ents:
        tokens = list(ent)
        if len(tokens) > 1 and tokens[0].is_sent_start and tokens[0].lower_ in _COMMAND_WORDS:
            tokens = tokens[1:]  # "Email Marc that ...": the recognizer took the verb along
        after_the = tokens[0].i > 0 and doc[tokens[0].i - 1].lower_ == "the"  # "the Eiger"
        if (
            ent.label_ == "PERSON"
            and not after_the
            and not any(t.i in found.by_token for t in tokens)
        ):
            name = as_written(doc[tokens[0].i : tokens[-1].i + 1].text)  # "lena" -> "Lena"
            found.add(at_work(name, tokens[-1]), tokens)
    for token in doc:
        if _currency(token):  # "I paid 18 CHF for lunch": an amount's unit, never a name
            continue
        if token.is_sent_start and token.lower_ in _COMMAND_WORDS:  # "Email Marc ..."
            continue
        if _unplaced_name(token, found) and department_of(token):  # "Kim from accounting"
            found.add(at_work(token.text, token), [token])
        elif _unplaced_name(token, found) or _maybe_name(token, found):
            found.unplaced.append(token)
        elif token.i not in found.by_token and lone_lowercase_name(token):
            found.unplaced.append(token)  # "had coffee with priya": a guess's, never sure
    found.compose()
    return found


def _relation_as_modifier(token: Token) -> bool:
    """A relation word the tagger took for an adjective of the name after it."""
    return (
        token.pos_ == "ADJ"
        and token.dep_ in ("amod", "compound")
        and token.head.i == token.i + 1
        and lowercase_name(token) is not None
    )


def _in_law(doc: Doc, noun: Token, found: Found) -> None:
    owner, _ = _owner(noun)
    after = noun.i + 5  # noun - in - law NAME
    if owner != "user" or after >= len(doc):
        return
    name = doc[after]
    relation = f"{noun.lower_}-in-law"
    role = TIER_RELATIONS[relation].role
    lowercase = name.is_lower and (name.pos_ == "PROPN" or known_lowercase_name(name))
    if _is_name(name, NOT_NAMES) or lowercase:
        mention = PersonMention(name=as_written(name.text), role=role, relation=relation)
        found.add(mention, [noun, name])
    else:
        mention = PersonMention(name=f"my {relation}", role=role, relation=relation, named=False)
        found.add(mention, [noun])


def _alone(token: Token) -> bool:
    """No capitalised word next to it: one name, not a title of several words."""
    doc = token.doc
    beside = [doc[i] for i in (token.i - 1, token.i + 1) if 0 <= i < len(doc)]
    capitalised = [t for t in beside if t.is_title and t.is_alpha and t.text != "I"]
    return all(t.is_sent_start and t.pos_ != "PROPN" for t in capitalised)  # "Is Leo ..."


def _relation(doc: Doc, noun: Token, found: Found, runs: dict[int, int]) -> None:
    owner, relation = _owner(noun)
    names = _names(doc, noun, runs)
    if owner is None and noun.is_title and noun.lower_ in TITLE_WORDS:
        owner = "user"  # "Grandma Rosa", or "Dad" said as a name: the user's
    modifiers = [c.lower_ for c in noun.children if c.dep_ in ("amod", "compound", "nmod")]
    if set(modifiers) & DOUBTFUL_MODIFIERS or (noun.i > 0 and noun.nbor(-1).lower_ in ("ex", "-")):
        found.doubts.append(f"{noun.text!r} with {modifiers}: not plainly that role")
        return
    kept = [m for m in modifiers if m in KEPT_MODIFIERS]
    relation = " ".join([*kept, relation]) if kept and "'" not in relation else relation
    if owner is None:
        if names:
            found.doubts.append(f"{noun.text!r} of nobody named {names[0].text!r}")
        return
    word = TIER_RELATIONS[noun.lower_]
    role = word.role if owner == "user" else "other"
    if not names:
        if owner == "user":
            words = [c.i for c in noun.children if c.dep_ in ("poss", "amod")]
            phrase = doc[min([*words, noun.i]) : noun.i + 1].text
            if not words and noun.is_title:  # "Dad" is "my dad"
                phrase = f"my {noun.lower_}"
            found.add(PersonMention(name=phrase, role=role, relation=relation, named=False), [noun])
        return
    for name in names:
        tokens = _name_tokens(doc, name)
        text = as_written(doc[tokens[0].i : tokens[-1].i + 1].text)
        found.add(PersonMention(name=text, role=role, relation=relation), [*tokens, noun])


def _owner(noun: Token) -> tuple[str | None, str]:
    """Whose relation: "user" (my, our, "I have a sister"), "other" (his, Anna's) or None;
    and the relation as written ("sister", "friend's sister")."""
    word = noun.lemma_.lower()
    # "our dog Rex" is parsed with the relation as a modifier of the name: "our" is its.
    holders = [noun, noun.head] if noun.dep_ in ("compound", "nmod") else [noun]
    for child in (c for holder in holders for c in holder.children):
        if child.dep_ != "poss":
            continue
        if child.lower_ in USER_OWNERS:
            return "user", word
        if child.lower_ in OTHER_OWNERS:
            return "other", f"{child.lower_} {word}"
        return "other", f"{child.text}'s {word}"
    return _held_by_subject(noun, word)


def _held_by_subject(noun: Token, word: str) -> tuple[str | None, str]:
    """ "a friend of mine", "we adopted a rabbit ...": the user's; "Tom has a dog": Tom's."""
    mine = [c for prep in noun.children if prep.lower_ == "of" for c in prep.children]
    if any(c.lower_ in ("mine", "ours") for c in mine):
        return "user", word
    head = noun.head
    subject = next((c for c in head.children if c.dep_ == "nsubj"), None)
    if noun.dep_ != "dobj" or head.lemma_ not in OWNING_VERBS or subject is None:
        return None, word
    if subject.lower_ in ("i", "we"):
        return "user", word
    return "other", f"{subject.text}'s {word}"


def _names(doc: Doc, noun: Token, runs: dict[int, int]) -> list[Token]:
    """The name tokens the relation noun introduces, by word order first, then the parse."""
    if noun.i in runs:
        first = doc[noun.i + 1]
        plural = noun.tag_ == "NNS"
        return [first, *_coordinated(doc, runs[noun.i])] if plural else [first]
    heads = []
    for child in noun.children:
        if _another_relation_between(doc, noun, child):
            continue  # "my son leo and his wife sara": sara is the wife's, whatever the parse
        if child.dep_ == "appos" and (_is_name(child, NOT_NAMES) or known_lowercase_name(child)):
            heads.append(child)  # "Jonas, my flatmate", "a friend of mine, pablo"
        if child.dep_ == "acl":  # "a son named Leo", "a rabbit called biscuit"
            heads.extend(named_by(child))
    if noun.dep_ in ("appos", "compound", "nmod") and _is_name(noun.head, NOT_NAMES):
        heads.append(noun.head)
    if noun.dep_ == "nsubjpass":  # "our hamster is called nugget"
        heads.extend(named_by(noun.head))
    if noun.dep_ == "attr" and noun.head.lemma_ == "be":
        heads.extend(c for c in noun.head.children if c.dep_ == "nsubj" and _is_name(c, NOT_NAMES))
    if noun.tag_ == "NNS" and not heads:  # "we have two kids, ella and max": the names are
        heads = [c for c in noun.conjuncts if _is_name(c, NOT_NAMES) or _proper_lowercase(c)]
    if noun.tag_ == "NNS":  # "two kids, Mia and Leo": each conjunct is one of them
        heads += [
            c for h in list(heads) for c in h.conjuncts
            if c not in heads and (_is_name(c, NOT_NAMES) or known_lowercase_name(c))
        ]  # fmt: skip
    lowercase = lowercase_name(noun) if not heads else None
    return [lowercase] if lowercase is not None else heads


def _proper_lowercase(token: Token) -> bool:
    """A lowercase word the tagger or the recognizer takes for a name ("ella", "max")."""
    proper = token.pos_ == "PROPN" or token.ent_type_ == "PERSON"
    return token.is_lower and token.is_alpha and proper and token.ent_type_ not in NOT_NAMES


def _another_relation_between(doc: Doc, noun: Token, name: Token) -> bool:
    """A relation word between a relation noun and a name after it: the name is that one's."""
    between = range(noun.i + 1, name.i)  # empty for a name before the noun
    return any(
        doc[i].lower_ in TIER_RELATIONS and doc[i].pos_ in ("NOUN", "PROPN") for i in between
    )


def _coordinated(doc: Doc, after: int) -> list[Token]:
    """Names after the first: "Anna and Eva", "Anna, Eva and Max"."""
    names: list[Token] = []
    index = after
    while index + 1 < len(doc) and doc[index].lower_ in (",", "and") and _is_name(doc[index + 1]):
        names.append(doc[index + 1])
        index += 2
        while index < len(doc) and _is_name(doc[index]):
            index += 1
    return names


def _is_name(token: Token, not_names: frozenset[str] = NOT_PEOPLE) -> bool:
    """A capitalised proper noun; linked to a relation word ("Lukas, my colleague"), the
    recognizer's "organisation" or "place" label is overruled."""
    return token.pos_ == "PROPN" and token.is_title and token.ent_type_ not in not_names


def _name_tokens(doc: Doc, first: Token) -> list[Token]:
    """A name of several words: the person entity around it, else the run of names."""
    if first.ent_type_ == "PERSON":  # from ``first`` on: "Grandma Rosa" is Rosa
        ent = next(e for e in doc.ents if e.start <= first.i < e.end)
        return list(doc[first.i : ent.end])
    tokens = [first]
    while tokens[-1].i + 1 < len(doc) and _is_name(doc[tokens[-1].i + 1]):
        tokens.append(doc[tokens[-1].i + 1])
    return tokens


def _currency(token: Token) -> bool:
    if token.is_upper and token.text in CURRENCIES:
        return True
    return token.lower_ in CURRENCY_WORDS and not token.is_title  # "Franc" may be a name


def _unplaced_name(token: Token, found: Found) -> bool:
    """A capitalised word no rule placed (a proper noun, or any word inside a sentence):
    maybe a name the recognizer missed ("What does Eva like?" tags Eva a verb)."""
    if token.i in found.by_token or not token.is_title or token.text == "I":
        return False
    if token.lower_ in DAY_NAMES:  # "every Monday at 8", whatever the recognizer says
        return False
    if token.ent_type_ in NOT_PEOPLE or (token.is_sent_start and token.pos_ != "PROPN"):
        return False
    return not (token.i > 0 and token.nbor(-1).text in ('"', "'"))


def _maybe_name(token: Token, found: Found) -> bool:
    """A one-word "organisation" or "place" where a person would stand ("about Sophie")."""
    if token.i in found.by_token or token.pos_ != "PROPN" or token.ent_type_ not in NOT_PEOPLE:
        return False
    ent = next((e for e in token.doc.ents if e.start <= token.i < e.end), None)
    if ent is None or len(ent) > 1 or ent.label_ in NOT_NAMES:
        return False
    return token.dep_ in _PERSON_SLOTS or (
        token.dep_ == "pobj" and token.head.lower_ in ("about", "with")
    )
