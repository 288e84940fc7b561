"""The Pub/Sub topology the agents function relies on, created idempotently in the emulator.

agent-jobs --push--> push relay --OIDC--> agents function; after 5 failed deliveries a message
goes to agent-jobs-dead-letter, whose pull subscription lets tests read it. On the dev stack
each push subscription has a pull subscription beside it, ``<push subscription>-kept``, which
the relay reads to keep the messages not yet acknowledged across a restart (``kept_messages``).
"""

from __future__ import annotations

import contextlib
import os

from .profile import (
    AGENTS_TOPIC,
    DEAD_LETTER_SUBSCRIPTION,
    DEAD_LETTER_TOPIC,
    HOST,
    PROJECT,
    PUSH_SUBSCRIPTION,
    Profile,
)

MAX_DELIVERY_ATTEMPTS = 5
# Pub/Sub's push deadline is the ack deadline: the maximum, since a local model can be slow.
ACK_DEADLINE_SECONDS = 600


# Every push subscription of the stack, (topic, subscription): what the dev stack keeps.
PUSHED = ((AGENTS_TOPIC, PUSH_SUBSCRIPTION),)


def kept_subscriptions() -> list[str]:
    return [f"projects/{PROJECT}/subscriptions/{sub}-kept" for _, sub in PUSHED]


def push_endpoint(profile: Profile) -> str:
    # The /projects/<p>/topics/<t> path lets functions-framework build the CloudEvent source
    # (//pubsub.googleapis.com/projects/<p>/topics/<t>) from the legacy push body.
    return f"http://{HOST}:{profile.port('push-relay')}/projects/{PROJECT}/topics/{AGENTS_TOPIC}"


def ensure_topology(profile: Profile) -> None:
    emulator = f"{HOST}:{profile.port('pubsub')}"
    create_topology(emulator, push_endpoint(profile), keep=profile.keeps)


def create_topology(emulator: str, endpoint: str, keep: bool) -> None:
    """The topics and subscriptions in the emulator at ``emulator``, pushing to ``endpoint``;
    with ``keep``, the pull subscriptions the relay keeps messages from."""
    os.environ["PUBSUB_EMULATOR_HOST"] = emulator
    # Imported late: the client takes ~1 s to import and only `up` needs it.
    from google.api_core.exceptions import AlreadyExists
    from google.cloud import pubsub_v1

    publisher = pubsub_v1.PublisherClient()
    subscriber = pubsub_v1.SubscriberClient()
    topic = publisher.topic_path(PROJECT, AGENTS_TOPIC)
    dead_letter_topic = publisher.topic_path(PROJECT, DEAD_LETTER_TOPIC)
    subscriptions = {
        DEAD_LETTER_SUBSCRIPTION: {"topic": dead_letter_topic},
        PUSH_SUBSCRIPTION: {
            "topic": topic,
            "push_config": {"push_endpoint": endpoint},
            "ack_deadline_seconds": ACK_DEADLINE_SECONDS,
            "dead_letter_policy": {
                "dead_letter_topic": dead_letter_topic,
                "max_delivery_attempts": MAX_DELIVERY_ATTEMPTS,
            },
            "retry_policy": {"minimum_backoff": {"seconds": 1}, "maximum_backoff": {"seconds": 10}},
        },
    }
    if keep:
        for topic_id, sub_id in PUSHED:
            subscriptions[f"{sub_id}-kept"] = {"topic": publisher.topic_path(PROJECT, topic_id)}
    try:
        for name in (topic, dead_letter_topic):
            with contextlib.suppress(AlreadyExists):
                publisher.create_topic(request={"name": name})
        for sub_id, config in subscriptions.items():
            name = subscriber.subscription_path(PROJECT, sub_id)
            with contextlib.suppress(AlreadyExists):
                subscriber.create_subscription(request={"name": name, **config})
    finally:
        subscriber.close()
        publisher.transport.close()
