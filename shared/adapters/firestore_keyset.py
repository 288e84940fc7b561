"""Keyset paging of a Firestore collection: order by one time field, then the document id
in the same direction (the order Firestore's automatic single-field index keeps anyway, so
no composite index is needed), and start after the previous page's last ``(time, id)``."""

from __future__ import annotations

from google.cloud import firestore
from google.cloud.firestore_v1.collection import CollectionReference
from google.cloud.firestore_v1.field_path import FieldPath
from google.cloud.firestore_v1.query import Query

from shared.ports import Keyset


def keyset_query(
    collection: CollectionReference,
    field: str,
    limit: int,
    after: Keyset | None,
    descending: bool,
) -> Query:
    direction = firestore.Query.DESCENDING if descending else firestore.Query.ASCENDING
    query: Query = (
        collection.order_by(field, direction=direction)
        .order_by(FieldPath.document_id(), direction=direction)
        .limit(limit)
    )
    if after is not None:
        moment, doc = after
        query = query.start_after({field: moment, FieldPath.document_id(): doc})
    return query
