"""The understanding tier's one entry point: ``UnderstandingTier.understand(message, context)``.

Order of evidence, most precise first: the grammar of an explicit command (a reminder, a
calendar entry, a note, an expense) settles the route with its plan; a statement whose
every clause a fact shape reads settles it as a statement; otherwise the nearest labelled
examples decide, among the labels the sentence's form allows (a question is not a
statement, a statement is not a question), when their margin is wide enough. Whatever is
left falls through to the model, part by part (``Understanding``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from shared.ports import Embedder
from shared.understanding.answers import (
    KnownFact,
    answer_from_facts,
    asked_name,
    asks_about_someone,
    roles_asked,
)
from shared.understanding.earlier import with_earlier
from shared.understanding.facts import read_facts, relationship_facts, states_facts
from shared.understanding.known_names import names_known, with_known
from shared.understanding.listings import read_listing
from shared.understanding.nlp import MAX_CHARS, pipeline
from shared.understanding.people import Found, asked_about, find_people
from shared.understanding.plain import plain_label, told
from shared.understanding.plans import plan_command, read_command
from shared.understanding.records import (
    ALL_RECORDS,
    RECORDS,
    names_records,
    not_elsewhere,
    told_not_reminded,
)
from shared.understanding.result import (
    GRAPH_ROUTE,
    LABELS,
    Facts,
    Label,
    People,
    Plan,
    RouteDecision,
    Understanding,
)
from shared.understanding.router import Router
from shared.understanding.said import said_facts
from shared.understanding.times import Times, find_times

if TYPE_CHECKING:  # spaCy loads with the pipeline, on first use (nlp.py)
    from spacy.tokens import Doc

_POLITE = re.compile(r"^(?:please\s+)?(?:can|could|would|will) you\b", re.IGNORECASE)
_WH_TAGS = frozenset({"WDT", "WP", "WP$", "WRB"})
_OTHERS = ("de", "fr", "it", "es", "pt", "nl")  # languages whose text must not be read as English
SHORT = 4  # words: a greeting in any language is short; longer foreign text is not read
Form = Literal[
    "request", "question", "to_assistant", "about_self", "told", "about_others",
    "about_assistant", "other",
]  # fmt: skip
# A question is no statement, a request neither a statement nor a question; a sentence
# about someone else ("my colleague is ill") asks the assistant for nothing.
_ALLOWED: dict[Form, frozenset[Label]] = {
    "request": frozenset(LABELS) - {"statement", "person_question"},
    "question": frozenset(LABELS) - {"statement"},
    # "how do you spend your spare time": asks the assistant about itself, never a job
    "to_assistant": frozenset({"feedback", "greeting", "thanks", "research", "person_question"}),
    "about_self": frozenset(LABELS) - {"person_question", "greeting"},
    # what the user did, in the past ("we had sushi for dinner"): told, never a question
    "told": frozenset(LABELS) - {"person_question", "greeting", "research"},
    "about_others": frozenset({"statement", "feedback", "greeting", "thanks"}),
    "about_assistant": frozenset({"feedback", "greeting", "thanks"}),
    "other": frozenset(LABELS),
}
COMMANDS: tuple[Label, ...] = ("schedule", "notes", "budget")
# What a guess takes instead of a greeting or an agent's job on thin evidence (_guessed):
# telling is a statement, asking goes to the agent that only reads (the registry's default).
_FORM_DEFAULT: dict[Form, Label] = {
    "request": "research", "question": "research", "to_assistant": "research",
    "about_self": "statement", "told": "statement",
    "about_others": "statement", "about_assistant": "feedback", "other": "statement",
}  # fmt: skip
_DECIDED_ONLY = frozenset({"greeting", "thanks"})  # they skip memory and extraction
_ACTING = frozenset({"schedule", "notes", "email", "budget", "research"})  # an agent's job
_FIRST_PERSON = frozenset({"i", "me", "my", "mine", "we", "us", "our"})
_SECOND_PERSON = frozenset({"you", "your", "yours"})
# Short answers a question may be waiting for: never read as a greeting.
_ACKNOWLEDGEMENTS = frozenset(
    {"ok", "okay", "k", "yes", "yeah", "yep", "no", "nope", "sure", "fine", "alright",
     "got it", "cool", "right", "ja", "nein", "oui", "non", "si", "sì"}
)  # fmt: skip
# The verb of a request names its kind; the examples must agree with it, or it falls through.
_REQUEST_VERBS: dict[str, Label] = {
    "remind": "schedule", "schedule": "schedule", "book": "schedule",
    "email": "email", "mail": "email", "reply": "email", "forward": "email", "draft": "email",
    "note": "notes", "jot": "notes",
    "research": "research", "compare": "research", "explain": "research", "search": "research",
}  # fmt: skip


@dataclass(frozen=True)
class Context:
    now: datetime  # aware
    timezone: str = "UTC"  # the user's IANA zone (AssistantProfile.timezone)
    currency: str | None = None  # the user's currency, for "I spent 40 on ..."
    facts: tuple[KnownFact, ...] = field(default_factory=tuple)  # retrieved, for answers
    # the user's previous messages in the chat, oldest first: whom "she" stands for (earlier.py)
    earlier: tuple[str, ...] = ()
    known_names: tuple[str, ...] = ()  # the user's people, found as typed (known_names.py)


class UnderstandingTier:
    def __init__(self, embedder: Embedder, router: Router | None = None) -> None:
        self.router = router or Router(embedder)
        self._embedder = embedder

    def load(self) -> None:
        """Load the pipeline, the vectors and the embedder now (a warm-up)."""
        pipeline()
        self.router.load()
        self._embedder.embed(["hello"])

    def understand(self, message: str, context: Context, guess: bool = False) -> Understanding:
        """``guess``: a route the examples leave open is guessed (``RouteDecision.guessed``)
        and lone unplaced names taken as people (``Found.result``) rather than left to the
        model, for a model that does both worse than the guess."""
        text = message.strip()
        if not text or len(text) > MAX_CHARS:
            return _unread(text, "empty or too long to read")
        vector = _vector(self._embedder, text)
        scores, elsewhere = self.router.scores(vector), self.router.elsewhere(vector)
        doc = pipeline()(text)
        if not _english(doc):
            return self._foreign(text, scores)
        found = with_earlier(doc, find_people(doc), context.earlier, pipeline())
        found = with_known(doc, found, context.known_names)
        times = find_times(doc, context.now, context.timezone)
        label, plan, facts = _by_rules(doc, found, times, context)
        route = self._route(label, scores, _form(doc), _first_verb(doc), _words(doc))
        if route.label is None:
            route = _plainly(route, doc)
        if route.label == "research" and _form(doc) == "question":
            route = _about_someone_known(route, found, context.known_names)
        if guess and route.label is None:
            route = _guessed(route, doc, found)
        if label is None:
            fallback = _FORM_DEFAULT[_form(doc)]
            request = _form(doc) == "request"
            route = not_elsewhere(route, scores, elsewhere, _words(doc), fallback, request)
            timed = bool(times.resolved)  # "remind me of X at 5pm" is a reminder
            route = told_not_reminded(route, text, _words(doc), timed, fallback)
        if route.label in _DECIDED_ONLY and (
            states_facts(doc) or any(m.role for m in found.mentions)
        ):
            # "Good morning! My sister Anna arrived today.": a greeting skips memory
            reason = f"a {route.label} that also tells something"
            route = route.model_copy(update={"label": "statement", "reason": reason})
        return _assemble(text, route, doc, found, times, context, plan, facts, guess)

    def _route(
        self,
        label: Label | None,
        scores: dict[Label, float],
        form: Form,
        first_verb: str,
        words: set[str],
    ) -> RouteDecision:
        if label is not None:
            return RouteDecision(label=label, best=label, score=1.0, margin=1.0, reason="rules")
        allowed = _ALLOWED[form]
        decision = self.router.decide({k: v for k, v in scores.items() if k in allowed})
        verb_says = _REQUEST_VERBS.get(first_verb) if form == "request" else None
        if decision.label is not None and verb_says is not None and verb_says != decision.label:
            reason = f"the request's verb says {verb_says}, the examples {decision.label}"
            return decision.model_copy(update={"label": None, "reason": reason})
        if decision.label is not None and not names_records(decision.label, words, verb_says):
            reason = f"{decision.label} near, but nothing of its records named"
            return decision.model_copy(update={"label": None, "reason": reason})
        return decision

    def _foreign(self, text: str, scores: dict[Label, float]) -> Understanding:
        route = self.router.decide(scores)
        if re.sub(r"[^\w ]", "", text.casefold()).strip() in _ACKNOWLEDGEMENTS:
            return _unread(text, "an answer, not a greeting")
        if route.label in ("greeting", "thanks") and len(text.split()) <= SHORT:
            return Understanding(
                message=text,
                route=route,
                people=People(decided=True),
                facts=Facts(decided=True),
                plan=Plan(decided=True),
            )
        return _unread(text, "not English")


def _plainly(route: RouteDecision, doc: Doc) -> RouteDecision:
    """A plain question about the world or a plain telling (plain.py)."""
    label = plain_label(doc, _form(doc), _words(doc), ALL_RECORDS, route.best)
    if label is None:
        return route
    return route.model_copy(update={"label": label, "reason": f"a plain {label}"})


def _about_someone_known(
    route: RouteDecision, found: Found, known: tuple[str, ...]
) -> RouteDecision:
    """A question naming one of the user's people asks memory, not the world: "what does
    luca do?" is about Luca, whom the user told about, however plain it reads."""
    if not names_known(found, known):
        return route
    reason = f"names someone the user knows ({route.reason})"
    return route.model_copy(update={"label": "person_question", "reason": reason})


def _guessed(route: RouteDecision, doc: Doc, found: Found) -> RouteDecision:
    """The open route's likeliest label: a request's verb when it names one ("schedule a
    call ..."), else the nearest examples' among the labels the form allows, when thin
    evidence may take it (``_may_guess``); else the form's default, and a question about
    someone (the user included) is asked of memory."""
    form, first_verb = _form(doc), _first_verb(doc)
    verb_says = _REQUEST_VERBS.get(first_verb) if form == "request" else None
    label = verb_says or route.best
    words = _words(doc)
    if verb_says is None and not (_may_guess(label, form, words) and names_records(label, words)):
        label = _FORM_DEFAULT[form]
        about = found.mentions or found.unplaced or any(t.lower_ in _FIRST_PERSON for t in doc)
        if label == "research" and form == "question" and about:
            label = "person_question"  # "What does Eva like?", "When did I move?"
    reason = f"guessed {label} ({route.reason})"
    return route.model_copy(update={"label": label, "guessed": True, "reason": reason})


def _words(doc: Doc) -> set[str]:
    return {t.lower_ for t in doc} | {t.lemma_.lower() for t in doc}


def _may_guess(label: Label, form: Form, words: set[str]) -> bool:
    """A greeting never (it skips memory); what someone tells is never an agent's job, nor
    feedback unless said to the assistant ("I like how you remember things"); a question
    reads a domain's records only when it names them ("what's on my calendar?")."""
    if label in _DECIDED_ONLY:
        return False
    if form in ("about_self", "told", "about_others"):  # "Dentist Tuesday 3pm" may be a command
        return label not in _ACTING and (label != "feedback" or bool(words & _SECOND_PERSON))
    if form == "question" and label in RECORDS:
        return bool(words & RECORDS[label])
    return True


def _by_rules(
    doc: Doc, found: Found, times: Times, context: Context
) -> tuple[Label | None, Plan | None, Facts | None]:
    """The label an explicit command's grammar or a fully read statement settles."""
    listing = read_listing(doc.text, context.now, context.timezone, context.currency)
    if listing is not None:  # "what are my reminders": a read, planned with its call
        return listing[0], listing[1], None
    for label in COMMANDS:
        plan = read_command(label, doc.text, times, context.now, context.currency, context.timezone)
        if plan is not None:
            return label, plan, None
    if _form(doc) == "question":
        # "where does luca work?": a question of an answer's shape asks memory
        return ("person_question" if asks_about_someone(doc.text) else None), None, None
    facts = read_facts(doc, found, times.resolved)
    if facts.decided and facts.facts:
        return "statement", None, facts
    return None, None, None


def _assemble(
    text: str,
    route: RouteDecision,
    doc: Doc,
    found: Found,
    times: Times,
    context: Context,
    plan: Plan | None,
    facts: Facts | None,
    guess: bool,
) -> Understanding:
    label = route.label
    if label is None:
        plan = Plan(decided=False, reason="the route falls through")
        facts = Facts(decided=False, reason="the route falls through")
    elif GRAPH_ROUTE[label] == "greeting":
        plan, facts = Plan(decided=True), Facts(decided=True)
    else:
        if plan is None:
            complex_route = GRAPH_ROUTE[label] == "complex"
            plan = (
                plan_command(label, text, times, context.now, context.currency, context.timezone)
                if complex_route
                else Plan(decided=True)
            )
        if facts is None:
            facts = (
                read_facts(doc, found, times.resolved)
                if label == "statement"
                else _facts_of_request(doc, found)
            )
    if not facts.decided:
        said = said_facts(list(doc.sents), found, times) if label == "statement" else []
        facts = facts.model_copy(update={"certain": relationship_facts(found, set()), "said": said})
    asks = label == "person_question"
    name = asked_name(text) if asks else None
    people = asked_about(found, name, guess) if name else found.result(guess)
    named = [m.name for m in people.mentions if m.named]
    answer = answer_from_facts(text, list(context.facts), named) if asks else None
    roles = sorted(roles_asked(text)) if asks else []
    return Understanding(
        message=text,
        language="en",
        route=route,
        people=people,
        times=times.resolved,
        spans=times.unresolved,
        facts=facts,
        plan=plan,
        answer=answer,
        about_roles=roles,
    )


def _facts_of_request(doc: Doc, found: Found) -> Facts:
    """A request or question states nothing but who a named relative is, unless a fact
    shape says otherwise (then the extraction model reads it)."""
    if states_facts(doc):
        return Facts(decided=False, reason="a request that also states facts")
    return Facts(decided=True, facts=relationship_facts(found, set()))


def _unread(text: str, reason: str) -> Understanding:
    route = RouteDecision(label=None, best="research", score=0.0, margin=0.0, reason=reason)
    return Understanding(
        message=text,
        route=route,
        people=People(decided=False, reason=reason),
        facts=Facts(decided=False, reason=reason),
        plan=Plan(decided=False, reason=reason),
    )


def _vector(embedder: Embedder, text: str) -> list[float]:
    return embedder.embed([text])[0]


def _first_verb(doc: Doc) -> str:
    """The verb a request starts with, after "please" or "can you"."""
    verb = next((t for t in doc if t.pos_ == "VERB" and t.lower_ not in ("can", "could")), None)
    return verb.lemma_.lower() if verb is not None else ""


def _english(doc: Doc) -> bool:
    """No more function words of the languages we see most than of English ("Meine
    Schwester wohnt in Berlin" is German; "Ben's wife Olivia loves gardening" has none)."""
    words = [t.lower_ for t in doc if t.is_alpha]
    if len(words) <= 2:
        return False
    letters = [ch for ch in doc.text if ch.isalpha()]
    if sum(ch.isascii() or "À" <= ch <= "ɏ" for ch in letters) * 2 < len(letters):
        return False  # another script (Cyrillic, Arabic, Han...): not English
    owners = {t.nbor(-1).lower_ for t in doc[1:] if t.lower_ in ("'s", "’s")}  # "Ben's"
    words = [word for word in words if word not in owners]
    english, foreign = _function_words()
    said_i = sum(t.text == "I" for t in doc)  # the English pronoun, never Italian's "i"
    return sum(w in foreign for w in words) <= sum(w in english for w in words) + said_i


@lru_cache(maxsize=1)
def _function_words() -> tuple[frozenset[str], frozenset[str]]:
    """English's and the other languages' stop words, each without the ones they share."""
    from importlib import import_module

    english = frozenset(import_module("spacy.lang.en.stop_words").STOP_WORDS)
    others = frozenset().union(
        *(import_module(f"spacy.lang.{code}.stop_words").STOP_WORDS for code in _OTHERS)
    )
    return english - others, others - english


# What the user asks the assistant to know or recall is a question of theirs, not of it.
_KNOWING = frozenset({"know", "remember", "recall", "have", "see", "think", "need", "mind"})


def _asks_the_assistant(doc: Doc) -> bool:
    """A question whose subject is "you", about the assistant's own doing ("how do you spend
    your spare time", "what do you like"), not a polite request nor what it knows."""
    root = next((t for t in doc if t.dep_ == "ROOT"), doc[0])
    subject = next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subject is None or subject.lower_ != "you" or root.lemma_ in _KNOWING:
        return False
    return not any(t.lower_ in ("my", "me", "i", "mine", "our", "us") for t in doc)


def _form(doc: Doc) -> Form:
    """What the sentence's form allows it to be (``_ALLOWED``)."""
    text = doc.text.strip()
    first = doc[0]
    if any(t.lower_ == "you" and t.dep_ == "nsubj" and t.head.tag_ == "VBD" for t in doc):
        return "about_assistant"  # "you got the date wrong", "how you handled it"
    if (
        _POLITE.match(text)
        or (first.tag_ == "VB" and first.dep_ == "ROOT")
        or first.lower_ == "please"
    ):
        return "request"
    inverted = first.pos_ == "AUX" and len(doc) > 1 and doc[1].dep_ in ("nsubj", "expl")
    if text.endswith("?") or first.tag_ in _WH_TAGS or inverted:
        return "to_assistant" if _asks_the_assistant(doc) else "question"
    root = next((t for t in doc if t.dep_ == "ROOT"), first)
    subject = next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subject is None:
        # "finally finished my thesis": the user's "I" left out, in the past tense
        return "told" if root.tag_ == "VBD" and root.i <= 1 and told(doc) else "other"
    if subject.lower_ in ("i", "we"):
        return "told" if root.tag_ == "VBD" and told(doc) else "about_self"
    return "about_others"
