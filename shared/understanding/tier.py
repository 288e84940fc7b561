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
from typing import TYPE_CHECKING

from shared.models.extraction import ExtractedFact
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
from shared.understanding.forms import ALLOWED, Form, first_verb, form_of, is_english, words_of
from shared.understanding.known_names import as_known, names_known, with_known
from shared.understanding.listings import read_listing
from shared.understanding.nlp import MAX_CHARS, pipeline
from shared.understanding.people import Found, asked_about, find_people
from shared.understanding.plain import plain_label
from shared.understanding.plans import asks_reminder, plan_command, read_command
from shared.understanding.prefaces import after_greeting, introduced_name, told_to_keep
from shared.understanding.records import (
    ALL_RECORDS,
    RECORDS,
    names_records,
    not_elsewhere,
    the_users_records,
    told_not_reminded,
)
from shared.understanding.result import (
    GRAPH_ROUTE,
    Facts,
    Label,
    People,
    Plan,
    RouteDecision,
    Understanding,
)
from shared.understanding.router import Router
from shared.understanding.said import said_facts
from shared.understanding.times import Times, cased, find_times

if TYPE_CHECKING:  # spaCy loads with the pipeline, on first use (nlp.py)
    from spacy.tokens import Doc

SHORT = 4  # words: a greeting in any language is short; longer foreign text is not read
COMMANDS: tuple[Label, ...] = ("schedule", "notes", "budget")
# What a guess takes instead of a greeting or an agent's job on thin evidence (_guessed):
# telling is a statement, asking goes to the agent that only reads (the registry's default).
_FORM_DEFAULT: dict[Form, Label] = {
    "request": "research", "question": "research", "to_assistant": "research",
    "about_self": "statement", "told": "statement",
    "about_others": "statement", "about_assistant": "feedback", "other": "statement",
}  # fmt: skip
_DECIDED_ONLY = frozenset({"greeting", "thanks"})
_SMALL_TALK = frozenset({"greeting", "thanks", "feedback"})  # they skip memory and extraction
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
        kept = told_to_keep(text)
        if kept is not None:
            return _as_told(text, self.understand(kept, context, guess))
        name = introduced_name(text)
        if name is not None:  # "hi, i'm sam": the user, not a contact called Sam
            return _introduction(text, name)
        rest = after_greeting(text)
        if rest is not None:  # "Hi! my aunt maria lives in porto": read what follows
            after = self.understand(rest, context, guess)
            if after.route.label not in (None, *_SMALL_TALK):  # "Hey, long time no see"
                return after.model_copy(update={"message": text})
        vector = _vector(self._embedder, text)
        scores, elsewhere = self.router.scores(vector), self.router.elsewhere(vector)
        doc = pipeline()(as_known(cased(text), context.known_names))
        if not is_english(doc):
            return self._foreign(text, scores)
        found = with_earlier(
            doc, find_people(doc), context.earlier, pipeline(), context.known_names
        )
        found = with_known(doc, found, context.known_names)
        times = find_times(doc, context.now, context.timezone)
        label, plan, facts = _by_rules(doc, found, times, context)
        route = self._route(label, scores, form_of(doc), first_verb(doc), words_of(doc))
        if route.label is None:
            route = _plainly(route, doc)
        if route.label == "research" and form_of(doc) == "question":
            route = _about_someone_known(route, found, context.known_names)
        if guess and route.label is None:
            route = _guessed(route, doc, found)
        if label is None:
            fallback = _FORM_DEFAULT[form_of(doc)]
            request = form_of(doc) == "request"
            route = not_elsewhere(route, scores, elsewhere, words_of(doc), fallback, request)
            timed = bool(times.resolved)  # "remind me of X at 5pm" is a reminder
            route = told_not_reminded(route, text, words_of(doc), timed, fallback)
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
        verb: str,
        words: set[str],
    ) -> RouteDecision:
        if label is not None:
            return RouteDecision(label=label, best=label, score=1.0, margin=1.0, reason="rules")
        allowed = ALLOWED[form]
        decision = self.router.decide({k: v for k, v in scores.items() if k in allowed})
        verb_says = _REQUEST_VERBS.get(verb) if form == "request" else None
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


def _as_told(message: str, told: Understanding) -> Understanding:
    """ "Remember that I ...": what follows read as told, a statement whatever it reads as
    alone (prefaces.py); its facts are the telling's, or the model's to read."""
    route = told.route.model_copy(update={"label": "statement", "reason": "told to keep"})
    plan = Plan(decided=True)
    if told.route.label != "statement":  # a question or command reads no facts
        facts = Facts(decided=False, reason="told to keep: the model reads it")
        return told.model_copy(
            update={"message": message, "route": route, "plan": plan, "facts": facts}
        )
    return told.model_copy(update={"message": message, "route": route, "plan": plan})


def _plainly(route: RouteDecision, doc: Doc) -> RouteDecision:
    """A plain question about the world or a plain telling (plain.py)."""
    label = plain_label(doc, form_of(doc), words_of(doc), ALL_RECORDS, route.best)
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
    form, verb = form_of(doc), first_verb(doc)
    verb_says = _REQUEST_VERBS.get(verb) if form == "request" else None
    label = verb_says or route.best
    words = words_of(doc)
    said = {t.lower_ for t in doc}
    named = names_records(label, words) and the_users_records(label, words, said)
    if verb_says is None and not (_may_guess(label, form, words) and named):
        label = _FORM_DEFAULT[form]
        about = found.mentions or found.unplaced or any(t.lower_ in _FIRST_PERSON for t in doc)
        if label == "research" and form == "question" and about:
            label = "person_question"  # "What does Eva like?", "When did I move?"
    reason = f"guessed {label} ({route.reason})"
    return route.model_copy(update={"label": label, "guessed": True, "reason": reason})


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
    listing = read_listing(doc.text, context.now, context.timezone)
    if listing is not None:  # "what are my reminders": a read, planned with its call
        return listing[0], listing[1], None
    for label in COMMANDS:
        plan = read_command(label, doc.text, times, context.now, context.currency, context.timezone)
        if plan is not None:
            return label, plan, None
    if asks_reminder(doc.text):  # "remind me to pay the rent on the 1st": which 1st is asked
        return "schedule", None, None
    if form_of(doc) == "question":
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
        facts = _with_certain(facts, doc, found, times, label)
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


# Words that add nothing to "Pepe is the user's cat" when a sentence names a relative.
_NAMING = frozenset({"the", "user", "user's", "is", "are", "called", "named", "a", "an", "s"})


def _with_certain(facts: Facts, doc: Doc, found: Found, times: Times, label: Label | None) -> Facts:
    """What the rules are sure of beside a model's reading: who is whose relative, and the
    sentences kept as said. A sentence that only names a relative ("my cat is called pepe")
    says no more than the relationship: it is not kept twice, and when every sentence is
    such, the facts are decided (no model call)."""
    certain = relationship_facts(found, set())
    said = said_facts(list(doc.sents), found, times) if label == "statement" else []
    kept = [f for f in said if not _restates(f.text, certain)]
    if certain and said and not kept and len(said) == len(list(doc.sents)):
        return Facts(decided=True, facts=certain)
    return facts.model_copy(update={"certain": certain, "said": kept})


def _restates(text: str, certain: list[ExtractedFact]) -> bool:
    words = set(re.findall(r"[\w']+", text.casefold())) - _NAMING
    return any(words <= set(re.findall(r"[\w']+", f.text.casefold())) for f in certain)


def _facts_of_request(doc: Doc, found: Found) -> Facts:
    """A request or question states nothing but who a named relative is, unless a fact
    shape says otherwise (then the extraction model reads it)."""
    if states_facts(doc):
        return Facts(decided=False, reason="a request that also states facts")
    return Facts(decided=True, facts=relationship_facts(found, set()))


def _introduction(text: str, name: str) -> Understanding:
    reason = "the user says who they are"
    route = RouteDecision(label="statement", best="statement", score=1.0, margin=1.0, reason=reason)
    fact = ExtractedFact(
        text=f"The user's name is {name}", type="Other", about="user", confidence=0.95
    )
    return Understanding(
        message=text,
        language="en",
        route=route,
        people=People(decided=True),
        facts=Facts(decided=True, facts=[fact]),
        plan=Plan(decided=True),
    )


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
