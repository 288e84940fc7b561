"""Calendar feed grants, fake and Firestore: one URL per user until rotated or revoked, and a
token finds its owner only while it is the owner's current one."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from google.cloud import firestore

from shared.adapters.doc_ids import doc_id
from shared.adapters.firestore_calendar_feeds import GRANT_DOCUMENT, FirestoreCalendarFeedStore
from shared.models.calendar_feed import FeedGrant, token_digest
from shared.ports import CalendarFeedStore

NOW = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)


def test_enabling_twice_keeps_the_first_url(
    calendar_feeds: CalendarFeedStore, user_id: str
) -> None:
    first = calendar_feeds.put_feed(user_id, FeedGrant.issue(NOW))
    again = calendar_feeds.put_feed(user_id, FeedGrant.issue(NOW))
    assert again == first == calendar_feeds.get_feed(user_id)
    assert calendar_feeds.feed_owner(first.digest) == user_id


def test_rotating_stops_the_old_url(calendar_feeds: CalendarFeedStore, user_id: str) -> None:
    old = calendar_feeds.put_feed(user_id, FeedGrant.issue(NOW))
    new = calendar_feeds.replace_feed(user_id, FeedGrant.issue(NOW))
    assert new != old and calendar_feeds.get_feed(user_id) == new
    assert calendar_feeds.feed_owner(old.digest) is None
    assert calendar_feeds.feed_owner(new.digest) == user_id


def test_revoking_stops_the_url_and_repeats_harmlessly(
    calendar_feeds: CalendarFeedStore, user_id: str
) -> None:
    grant = calendar_feeds.put_feed(user_id, FeedGrant.issue(NOW))
    calendar_feeds.delete_feed(user_id)
    calendar_feeds.delete_feed(user_id)
    assert calendar_feeds.get_feed(user_id) is None
    assert calendar_feeds.feed_owner(grant.digest) is None


def test_tokens_are_the_owners_only(calendar_feeds: CalendarFeedStore, user_id: str) -> None:
    mine = calendar_feeds.put_feed(user_id, FeedGrant.issue(NOW))
    theirs = calendar_feeds.put_feed(f"{user_id}_2", FeedGrant.issue(NOW))
    assert calendar_feeds.feed_owner(mine.digest) == user_id
    assert calendar_feeds.feed_owner(theirs.digest) == f"{user_id}_2"
    assert calendar_feeds.feed_owner(token_digest("nobody was given this")) is None


@pytest.mark.stack
def test_a_lookup_left_behind_by_an_erased_tree_finds_nobody(
    stack_env: None, firestore_client: firestore.Client, user_id: str
) -> None:
    store = FirestoreCalendarFeedStore(firestore_client)
    grant = store.put_feed(user_id, FeedGrant.issue(NOW))
    user = firestore_client.collection("users").document(doc_id(user_id))
    user.collection("settings").document(GRANT_DOCUMENT).delete()  # as erasing users/{uid}
    assert store.feed_owner(grant.digest) is None
