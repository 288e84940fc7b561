"""The Pub/Sub topology the agents function relies on, created idempotently in the emulator.

agent-jobs --push--> push relay --OIDC--> agents function; after 5 failed deliveries a message
goes to agent-jobs-dead-letter, whose pull subscription lets tests read it.
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


def push_endpoint(profile: Profile) -> str:
    # The /projects/<p>/topics/<t> path lets functions-framework build the CloudEvent source
    # (//pubsub.googleapis.com/projects/<p>/topics/<t>) from the legacy push body.
    return f"http://{HOST}:{profile.port('push-relay')}/projects/{PROJECT}/topics/{AGENTS_TOPIC}"


def ensure_topology(profile: Profile) -> None:
    os.environ["PUBSUB_EMULATOR_HOST"] = f"{HOST}:{profile.port('pubsub')}"
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
            "push_config": {"push_endpoint": push_endpoint(profile)},
            "ack_deadline_seconds": ACK_DEADLINE_SECONDS,
            "dead_letter_policy": {
                "dead_letter_topic": dead_letter_topic,
                "max_delivery_attempts": MAX_DELIVERY_ATTEMPTS,
            },
            "retry_policy": {"minimum_backoff": {"seconds": 1}, "maximum_backoff": {"seconds": 10}},
        },
    }
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
