"""Publisher contract: the fake and Pub/Sub (the stack's emulator) behave the same."""

from __future__ import annotations

from tests.contract.conftest import PublisherBackend


def test_published_messages_arrive_with_their_attributes(
    publisher_backend: PublisherBackend,
) -> None:
    publisher = publisher_backend.publisher
    first = publisher.publish(publisher_backend.topic, b'{"job_id": "j1"}', {"job_id": "j1"})
    second = publisher.publish(publisher_backend.topic, b'{"job_id": "j2"}', {})
    assert first and second and first != second
    assert sorted(publisher_backend.received(2)) == [
        (b'{"job_id": "j1"}', {"job_id": "j1"}),
        (b'{"job_id": "j2"}', {}),
    ]
