"""The dev stack's unacknowledged Pub/Sub messages kept across restarts, in one JSON file.

The Pub/Sub emulator keeps messages for the lifetime of its process only, and has no
export. Without this, an agent job published but not yet acknowledged at ``make down``
would never run, while its record says it is queued. The push relay keeps them, since it
sees every push and its answer: a pull subscription beside each push subscription
(``pubsub_setup``) hands it a copy of every message published; a message leaves the file
once its push is answered 2xx, or after the subscription's last failed attempt (the
emulator then dead-letters it). At the next start the relay publishes what is left again,
in order, with its data, attributes and ordering key, once its target listens (a job
pushed to a function that is still starting would use up its attempts). Delivery stays at
least once: a message acknowledged in the last moments before a kill is published again,
and the handler's idempotency (agent jobs: the job id) makes that a no-op.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from . import kept_file

log = logging.getLogger("push-relay")
SETTLED_MEMORY = 10_000  # ids whose push settled before their copy arrived
# (topic path, message id, publish time): ids are unique within a topic, and the emulator
# numbers them from 1 again after each start.
Key = tuple[str, str, str]


@dataclass(frozen=True)
class Message:
    topic: str  # projects/<p>/topics/<t>
    message_id: str
    data: bytes
    attributes: dict[str, str]
    ordering_key: str = ""
    publish_time: str = ""  # as ``instant`` writes it

    @property
    def key(self) -> Key:
        return (self.topic, self.message_id, self.publish_time)


def instant(value: datetime | str) -> str:
    """One spelling of a publish time, from the push body's text or the client's datetime."""
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def save(path: str, messages: Iterable[Message]) -> None:
    body = [
        {
            "topic": m.topic,
            "message_id": m.message_id,
            "data": base64.b64encode(m.data).decode(),
            "attributes": m.attributes,
            "ordering_key": m.ordering_key,
            "publish_time": m.publish_time,
        }
        for m in messages
    ]
    kept_file.write_json(path, {"messages": body})


def load(path: str) -> list[Message]:
    return kept_file.read_json(path, _parse, [])


def _parse(body: Any) -> list[Message]:
    messages = []
    for item in body["messages"]:
        attributes = item["attributes"]
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in attributes.items()):
            raise TypeError("attributes must map strings to strings")
        messages.append(
            Message(
                topic=str(item["topic"]),
                message_id=str(item["message_id"]),
                data=base64.b64decode(item["data"], validate=True),
                attributes=dict(attributes),
                ordering_key=str(item["ordering_key"]),
                publish_time=str(item["publish_time"]),
            )
        )
    return messages


class Keeper:
    """The messages not yet settled, in the order they were published."""

    def __init__(self, max_attempts: int, kept: Iterable[Message] = ()) -> None:
        self._max_attempts = max_attempts
        self._lock = threading.Lock()
        self._pending: dict[Key, Message] = {m.key: m for m in kept}
        self._failures: dict[Key, int] = {}
        self._settled: OrderedDict[Key, None] = OrderedDict()
        self.changed = threading.Event()  # something to write to the file

    def record(self, message: Message) -> None:
        """A copy of a published message arrived."""
        with self._lock:
            if message.key not in self._settled and message.key not in self._pending:
                self._pending[message.key] = message
                self.changed.set()

    def settle(self, key: Key, acknowledged: bool) -> None:
        """The answer to one push of the message: 2xx acknowledges it; the last failed
        attempt dead-letters it. Either way Pub/Sub will not push it again."""
        with self._lock:
            if not acknowledged:
                self._failures[key] = self._failures.get(key, 0) + 1
                if self._failures[key] < self._max_attempts:
                    return
            self._failures.pop(key, None)
            self._settled[key] = None
            if len(self._settled) > SETTLED_MEMORY:
                self._settled.popitem(last=False)
            if self._pending.pop(key, None) is not None:
                self.changed.set()

    def forget(self, message: Message) -> None:
        """``message`` was published again: its copy is kept instead, as a new message."""
        with self._lock:
            if self._pending.pop(message.key, None) is not None:
                self.changed.set()

    def pending(self) -> list[Message]:
        with self._lock:
            return list(self._pending.values())

    def snapshot(self) -> list[Message]:
        """For the file: what is pending now; later changes set ``changed`` again."""
        with self._lock:
            self.changed.clear()
            return list(self._pending.values())


def pushed(path: str, body: bytes) -> Key | None:
    """The key of a push the relay received: the stack's push endpoints are
    ``/projects/<p>/topics/<t>`` (``pubsub_setup.push_endpoint``)."""
    topic = path.split("?", 1)[0].strip("/")
    try:
        message = json.loads(body)["message"]
        message_id = message.get("messageId") or message.get("message_id")
        published = instant(message.get("publishTime") or message.get("publish_time"))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if not topic.startswith("projects/") or not isinstance(message_id, str):
        return None
    return (topic, message_id, published)


def emulator_publisher(emulator: str) -> Any:
    """Pub/Sub's plain Publish call (the client library's ``publish`` batches, and takes
    ordering keys only from a client made for them), on the emulator at ``emulator``."""
    import grpc
    from google.pubsub_v1.services.publisher import PublisherClient
    from google.pubsub_v1.services.publisher.transports import PublisherGrpcTransport

    channel = grpc.insecure_channel(emulator)
    return PublisherClient(transport=PublisherGrpcTransport(channel=channel))


def republish(keeper: Keeper, publisher: Any, messages: list[Message]) -> int:
    """Publish ``messages`` again, one at a time so each ordering key keeps its order, and
    forget each once published (its copy is kept by then, or soon); returns how many went.
    One that fails stays kept (the next start tries it again), unless its topic is gone."""
    from google.api_core.exceptions import GoogleAPICallError, NotFound

    sent = 0
    for message in messages:
        request = {
            "topic": message.topic,
            "messages": [
                {
                    "data": message.data,
                    "attributes": message.attributes,
                    "ordering_key": message.ordering_key,
                }
            ],
        }
        try:
            publisher.publish(request=request, timeout=30)
        except NotFound:
            log.warning("dropping a kept message of %s: no such topic", message.topic)
        except GoogleAPICallError as error:
            log.warning("kept message %s not published again: %s", message.message_id, error)
            continue
        else:
            sent += 1
        keeper.forget(message)
    return sent


def start(
    path: str, subscriptions: list[str], max_attempts: int, target_ready: Callable[[], bool]
) -> Keeper:
    """Load the kept messages and keep the file up to date; in the background, follow
    ``subscriptions`` (the copies), and publish the kept messages again once
    ``target_ready`` holds. Call from the main thread (the file is written on SIGTERM)."""
    kept = load(path)
    keeper = Keeper(max_attempts, kept)
    log.info("%d message(s) kept in %s", len(kept), path)
    kept_file.keep_writing(keeper.changed, lambda: save(path, keeper.snapshot()))
    args = (keeper, kept, subscriptions, target_ready)
    threading.Thread(target=_follow, args=args, name="kept-pubsub", daemon=True).start()
    return keeper


def _follow(
    keeper: Keeper, kept: list[Message], subscriptions: list[str], ready: Callable[[], bool]
) -> None:
    # Imported here: the client takes about a second to import, the relay starts without it.
    from google.cloud import pubsub_v1

    subscriber = pubsub_v1.SubscriberClient()
    for name in subscriptions:
        topic = _topic_of(subscriber, name)

        def copy(received: Any, topic: str = topic) -> None:
            keeper.record(_message(topic, received))
            received.ack()

        subscriber.subscribe(name, callback=copy)
    _wait(ready)
    publisher = emulator_publisher(os.environ["PUBSUB_EMULATOR_HOST"])
    log.info("published %d kept message(s) again", republish(keeper, publisher, kept))
    publisher.transport.close()


def _topic_of(subscriber: Any, subscription: str) -> str:
    """The subscription's topic, once ``stack up`` has made it (after the relay started)."""
    from google.api_core.exceptions import GoogleAPICallError

    while True:
        try:
            return str(subscriber.get_subscription(subscription=subscription).topic)
        except GoogleAPICallError:
            time.sleep(0.5)


def _wait(ready: Callable[[], bool]) -> None:
    while True:
        try:
            if ready():
                return
        except OSError:
            pass
        time.sleep(0.5)


def _message(topic: str, received: Any) -> Message:
    return Message(
        topic=topic,
        message_id=received.message_id,
        data=bytes(received.data),
        attributes=dict(received.attributes),
        ordering_key=received.ordering_key or "",
        publish_time=instant(received.publish_time),
    )
