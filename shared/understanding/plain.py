"""Routes a plain sentence's form settles when the examples are not near enough.

A question that names nobody, no record of ours and not the assistant asks to be answered
(``research``, the agent that only reads): "what's the tallest mountain in africa", "how
do i get a stain out of a shirt". A sentence that tells something in the indicative, with
no wish, plan or duty in it, no record of ours and no amount, is a ``statement``: "my
friend nadia moved to toronto last month". Anything else is left to the examples or the
model. Chosen on the labelled set and CLINC150 train (bench/understanding_tune.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.understanding.lexicon import CURRENCY_WORDS
from shared.understanding.result import Label
from shared.understanding.times import MONTH_AFTER

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

# A wish, a plan or a duty: "I need to ...", "we're going to ...", "don't let me forget".
_WANTING = frozenset(
    {"need", "want", "wish", "plan", "hope", "must", "should", "forget", "remember",
     "remind", "let", "try", "gon", "going", "would", "like", "love"}
)  # fmt: skip
_GRATEFUL = frozenset({"grateful", "thankful", "appreciate", "thank", "thanks"})
_NEAREST = frozenset({"research", "person_question", "statement"})  # what may be plain
_ASKING_HOW = frozenset({"how", "what", "where", "which", "why"})
_ME = frozenset({"i", "me", "my", "mine", "we", "us", "our", "ours", "myself"})
_YOU = frozenset({"you", "your", "yours", "yourself"})


def plain_label(
    doc: Doc, form: str, words: set[str], records: frozenset[str], nearest: Label
) -> Label | None:
    """``form`` as forms.form_of reads it; ``records``: every word naming what an agent keeps;
    ``nearest``: the examples' best label, which must be one a plain sentence may be (not
    a greeting, thanks, feedback or an agent's records: "how are things", "what's
    happening on may 3rd")."""
    # what the user did ("told") is never asked: the examples' nearest need not be plain
    if (nearest not in _NEAREST and form != "told") or words & (records | _YOU | _GRATEFUL):
        return None
    if words & CURRENCY_WORDS.keys() or doc[0].pos_ == "AUX":  # "is the gang meeting today"
        return None
    if form == "question":
        return "research" if _asks_the_world(doc) else None
    if form in ("about_self", "told", "about_others") and _tells(doc):
        return "statement"
    return None


def _asks_the_world(doc: Doc) -> bool:
    """A wh-question about no one: no name, no "my", no "I" but "how do I ..."."""
    if doc[0].lower_ not in _ASKING_HOW or any(t.ent_type_ == "PERSON" for t in doc):
        return False
    general_i = doc[0].lower_ == "how" and len(doc) > 2 and doc[2].lower_ == "i"
    me = [t for t in doc if t.lower_ in _ME]
    return not me or (general_i and all(t.lower_ == "i" for t in me))


# Words before which "may" is the month: "in may", "since may", "early may".
_BEFORE_MONTH = MONTH_AFTER | {"is", "was"}  # "her birthday is may 3"


def is_modal(token: Token) -> bool:
    """A modal verb, but not the month: "her birthday is may 3", "we met in may"."""
    if token.tag_ != "MD":
        return False
    if token.lower_ != "may":
        return True
    doc = token.doc
    after = doc[token.i + 1] if token.i + 1 < len(doc) else None
    before = doc[token.i - 1] if token.i > 0 else None
    if after is not None and after.like_num:
        return False
    return not (
        before is not None
        and before.lower_ in _BEFORE_MONTH
        and (after is None or not after.is_alpha)
    )


def told(doc: Doc) -> bool:
    """Said as done, nothing wished or asked in it: "we had sushi for dinner"."""
    return _tells(doc) and not any(t.lower_ in ("how", "why", "what", "where", "who") for t in doc)


def _tells(doc: Doc) -> bool:
    """Indicative, one sentence or more, no modal, no wish or plan, no imperative."""
    for token in doc:
        if is_modal(token) or token.lemma_.lower() in _WANTING or token.lower_ in _WANTING:
            return False
        if (
            token.lemma_.lower() == "have"
            and token.i + 1 < len(doc)
            and doc[token.i + 1].lower_ == "to"
        ):
            return False  # "I have to ...": a duty
        if token.dep_ == "ROOT" and token.tag_ == "VB":  # "call mom tomorrow"
            return False
    return True
