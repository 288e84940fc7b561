"""The understanding tier's reading of a message, in the turn graph's terms.

``read`` runs the deterministic tier (``shared.understanding``) on the turn's message once,
in the classification stage, before any model call. What it settles replaces a call: the
whole intent (``settled_intent``: no classify call), the plan of an explicit command
(``Intent.planned``: the planner takes it without a call), the facts of a statement it
reads whole (``Intent.stated``: the extraction task carries them and calls no model). What
it leaves open goes to the model, with the parts it is sure of kept (``merged_intent``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from shared.config import Settings
from shared.conversation.text import fold
from shared.graph.context import TurnContext
from shared.graph.state import EARLIER, EntityRef, Intent, PlanStep, Route, TurnState
from shared.models.domain import UnderstandingUse
from shared.models.extraction import Extraction

if TYPE_CHECKING:  # the tier (numpy, its vectors) loads with the first message that needs it
    from shared.understanding import KnownFact, Understanding
    from shared.understanding.result import Answer


def read(context: TurnContext, state: TurnState) -> Understanding | None:
    """The tier's reading, or None when the deployment runs without it."""
    tier = context.ports.understanding
    if tier is None:
        return None
    from shared.understanding import Context

    profile = state.conversation.profile
    now = context.ports.clock.now()
    reading = Context(
        now=now,
        timezone=profile.timezone,
        currency=profile.currency,
        earlier=earlier_messages(state),
        known_names=tuple(state.conversation.known_names),
    )
    guess = context.ports.settings.model_strength == "weak"  # the nearest label, no call
    return tier.understand(state.conversation.user_message, reading, guess=guess)


EARLIER_MESSAGES = 3  # the user's previous messages the tier may read "she" from


def earlier_messages(state: TurnState) -> tuple[str, ...]:
    """The user's previous messages in this chat, oldest first (not this turn's own)."""
    conversation = state.conversation
    said = [
        m.text
        for m in conversation.history
        if m.role == "user" and m.id != conversation.message_id and m.text
    ]
    return tuple(said[-EARLIER_MESSAGES:])


def settled_intent(understood: Understanding) -> Intent:
    """The intent of a message the tier settled (``Understanding.settled``)."""
    label = understood.route.label
    if label is None:
        raise ValueError("an unsettled reading has no intent of its own")
    # A question, or a request whose call the tier did not spell out (its agent works from
    # what is known), wants memory: semantic when it names people, temporal when it names
    # times; a question about someone always searches.
    asks = label == "person_question" or (
        understood.graph_route == "complex" and not any(s.call for s in planned(understood))
    )
    times = bool(understood.times or understood.spans)
    unread = Intent(
        route=_route(understood),
        # facts the tier leaves open are the extraction model's to read (or to find none)
        has_extractable_facts=True,
        has_preferences=True,
        needs_semantic_retrieval=label == "person_question"
        or (asks and bool(understood.people.mentions)),
        needs_temporal_retrieval=asks and times and label in ("person_question", "schedule"),
        fast_path=True,
        decided_by="understanding",
    )
    return merged_intent(unread, understood)


def unsure_intent(understood: Understanding) -> Intent:
    """The intent of a message the tier left open when the model could not classify it:
    the tier's route if it has one, else a plain reply that looks in memory for what the
    message may be about (the honest "I don't know" needs that search too)."""
    unread = Intent(
        route="simple",
        has_extractable_facts=True,
        has_preferences=True,
        needs_semantic_retrieval=True,
        needs_temporal_retrieval=bool(understood.times or understood.spans),
        decided_by="understanding",
    )
    return merged_intent(unread, understood)


def within_reach(intent: Intent, settings: Settings) -> Intent:
    """What the deployment's model can do: a weak one (``MODEL_STRENGTH=weak``, the local
    one: its research jobs stopped at their step limit) answers a research question in the
    reply instead, from what it knows."""
    if settings.model_strength != "weak" or intent.label != "research":
        return intent
    return intent.model_copy(update={"route": "simple", "planned": []})


def merged_intent(model: Intent, understood: Understanding) -> Intent:
    """The model's intent with what the tier decided put over it: the route and its plan,
    the people, the facts (and so whether there are any to extract), the resolved times."""
    update: dict[str, object] = {"tier": use_of(understood)}
    label = understood.route.label
    if label is not None:
        update |= {"route": _route(understood), "label": label, "planned": planned(understood)}
        update["about_roles"] = list(understood.about_roles)
    if understood.people.decided:
        update["entities"] = [
            EntityRef(name=m.name, role=m.relation) for m in understood.people.mentions
        ]
    found = [t.text for t in understood.times] + understood.spans
    if found:
        said = {t.casefold() for t in model.temporal_references}
        extra = [t for t in found if t.casefold() not in said]
        update["temporal_references"] = [*model.temporal_references, *extra]
    facts = understood.facts
    if facts.decided and understood.people.decided:
        update |= {
            "has_extractable_facts": bool(facts.facts),
            "has_preferences": any(f.type == "Preference" for f in facts.facts),
            "stated": stated(understood),
        }
    elif understood.people.decided:
        entities = [m.entity_mention() for m in understood.people.mentions]
        if facts.certain:
            update["fallback"] = Extraction(facts=facts.certain, entities=entities)
        if facts.said:
            update |= {"said": Extraction(facts=facts.said, entities=entities)}
            update["has_extractable_facts"] = True
    return model.model_copy(update=update)


def planned(understood: Understanding) -> list[PlanStep]:
    """The tier's plan as the planner's steps (a tool call spelled out when it read one)."""
    plan = understood.plan
    if not plan.decided or understood.graph_route != "complex":
        return []
    return [
        PlanStep(
            id=step.id,
            agent=step.agent,
            inputs={"goal": step.goal},
            depends_on=list(step.depends_on),
            call=step.call,
        )
        for step in plan.steps
    ]


def stated(understood: Understanding) -> Extraction | None:
    """What extraction stores without a model call: facts the tier read whole, with the
    people they are about (None: the extraction model reads the message)."""
    if not (understood.facts.decided and understood.people.decided):
        return None
    return understood.facts.extraction(understood.people)


def told_back(state: TurnState) -> Answer | None:
    """A statement confirmed back to the user: the facts the tier read ("Noted: Anna lives
    in Berlin."), or only that it was heard when they are the extraction model's to read."""
    intent = state.intent
    if intent is None or intent.label != "statement":
        return None
    from shared.understanding.answers import told_back as confirmation
    from shared.understanding.result import Answer

    facts = intent.stated.facts if intent.stated else []
    return Answer(text=confirmation([f.text for f in facts]), fact_ids=[])


def nothing_known(state: TurnState) -> Answer | None:
    """A question about people of whom nothing was retrieved, said so ("I don't know
    anything about Anna yet.") rather than left to a weak model, which invents it."""
    intent = state.intent
    if intent is None or intent.label != "person_question" or state.memory.unavailable:
        return None  # not looked up is not unknown
    if intent.about_roles and not state.memory.roles:  # nobody of the group is known
        from shared.understanding.answers import group_asked
        from shared.understanding.result import Answer

        group = group_asked(state.conversation.focus)
        if group is not None:
            return Answer(text=f"I don't know anything about {_as_said(group)} yet.", fact_ids=[])
    if not intent.entities:
        return _nothing_about_the_user(state)
    about = set(state.memory.facts_by_entity) - {"user", EARLIER}
    known = {name.casefold() for name in about}
    said = [_as_said(e.name) for e in intent.entities]
    if any(name.casefold() in known for name in said):
        return None
    if any(_may_be(e.name, state) for e in intent.entities if _as_said(e.name) != e.name):
        return None  # an unnamed "my boss" may be one of the people facts were found about
    from shared.understanding.result import Answer

    text = f"I don't know anything about {' and '.join(said)} yet."
    return Answer(text=text, fact_ids=[])


def _nothing_about_the_user(state: TurnState) -> Answer | None:
    from shared.understanding.answers import asks_about_the_user
    from shared.understanding.result import Answer

    if not asks_about_the_user(state.conversation.focus) or state.memory.facts_by_entity.get(
        "user"
    ):
        return None
    return Answer(text="I don't know anything about you yet.", fact_ids=[])


def asked_about(state: TurnState) -> dict[str, list[str]]:
    """The retrieved facts the reply may use: for a question about named people whose facts
    were found, only theirs (a model handed the user's allergy answered "Where does Luca
    work?" with it); else all of them."""
    found = state.memory.facts_by_entity
    intent = state.intent
    if intent is None or intent.label != "person_question" or not intent.entities:
        return found
    names = {e.name.casefold() for e in intent.entities}
    theirs = {who: facts for who, facts in found.items() if who.casefold() in names}
    return theirs or found


def _may_be(mention: str, state: TurnState) -> bool:
    """Whether the unnamed "my sister" is someone known: the resolver chose a person for
    it, or it is a word the relation table does not know and facts were found about
    someone (who may be meant)."""
    from shared.conversation.relations import TIER_RELATIONS

    memory = state.memory
    if any(r.person_id and fold(r.mention) == fold(mention) for r in memory.resolved):
        return True
    if TIER_RELATIONS.get(fold(mention.partition(" ")[2])) is not None:
        return False
    return any(f.subject_id for f in [*memory.semantic, *memory.temporal])


def _roles(state: TurnState) -> dict[str, str]:
    """Person id -> role: of a group asked about, and of whom the resolver chose for an
    unnamed "my grandmother" (so "where does my grandmother live?" finds Rosa's facts)."""
    from shared.conversation.relations import TIER_RELATIONS

    roles = dict(state.memory.roles)
    for resolved in state.memory.resolved:
        mine, _, word = fold(resolved.mention).partition(" ")
        relation = TIER_RELATIONS.get(word) if mine in ("my", "our") else None
        if resolved.person_id and relation is not None:
            roles.setdefault(resolved.person_id, relation.role)
    return roles


def _as_said(name: str) -> str:
    """A mention as the reply says it: "my boss" is "your boss"."""
    first, _, rest = name.partition(" ")
    return f"your {rest}" if first.casefold() in ("my", "our") and rest else name


def known_instead(state: TurnState) -> Answer | None:
    """A question about someone known that no stored fact answers: said so, with what is
    known ("I don't know that yet. What I know about Tom: ..."), for a weak model."""
    from shared.understanding.answers import known_instead as unanswered

    return _about_people(state, unanswered)


def all_known(state: TurnState) -> Answer | None:
    """For a weak model: a question about someone known that no shape reads, answered with
    what is known of them rather than by the model."""
    from shared.understanding.answers import all_known as known

    return _about_people(state, lambda _question, facts, names: known(facts, names))


def answer(state: TurnState) -> Answer | None:
    """A question about a known person the retrieved facts answer: the facts, quoted
    ("Where does Anna live?" -> "Anna lives in Berlin."). None: the model answers alone."""
    from shared.understanding.answers import answer_from_facts

    return _about_people(state, answer_from_facts)


def _about_people(
    state: TurnState, reader: Callable[[str, list[KnownFact], list[str]], Answer | None]
) -> Answer | None:
    """``reader`` over the retrieved facts, for a question about people."""
    intent, memory = state.intent, state.memory
    if intent is None or intent.label != "person_question" or memory.unavailable:
        return None
    from shared.understanding import KnownFact

    roles = _roles(state)
    facts: list[KnownFact] = [
        KnownFact(
            id=f.id,
            subject_id=f.subject_id,
            subject_name=memory.subjects.get(f.subject_id) if f.subject_id else None,
            subject_role=roles.get(f.subject_id) if f.subject_id else None,
            text=f.text,
        )
        for f in [*memory.semantic, *memory.temporal]
    ]
    return reader(state.conversation.focus, facts, [e.name for e in intent.entities])


def use_of(understood: Understanding) -> UnderstandingUse:
    return UnderstandingUse(
        label=understood.route.label,
        route=understood.route.decided,
        guessed=understood.route.guessed,
        people=understood.people.decided,
        facts=understood.facts.decided and understood.people.decided,
        plan=bool(planned(understood)),
    )


def _route(understood: Understanding) -> Route:
    route = understood.graph_route
    if route is None:
        raise ValueError("the tier did not decide the route")
    return route
