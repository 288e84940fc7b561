"""The API's shared conventions: routes by template, page tokens, etags, the error body."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import flask
import pytest

from shared.errors import (
    InvalidPageToken,
    MethodNotAllowed,
    NotFound,
    PreconditionFailed,
)
from shared.rest import etags
from shared.rest.origin import function_for
from shared.rest.paging import PageQuery, PageTokens, scope_of
from shared.rest.routes import Route, Router

NOW = datetime(2026, 11, 27, 12, tzinfo=UTC)


def _ok() -> flask.Response:
    return flask.Response("ok")


ROUTER = Router(
    [
        Route("GET", "/v1/facts", _ok),
        Route("GET", "/v1/facts/{fact}", _ok),
        Route("PATCH", "/v1/facts/{fact}", _ok),
        Route("POST", "/v1/facts/{fact}:restore", _ok),
        Route("POST", "/v1/facts:search", _ok),
    ]
)


def test_a_template_binds_its_variables_and_custom_verbs_stay_apart() -> None:
    assert ROUTER.match("GET", "/v1/facts/abc").params == {"fact": "abc"}
    assert ROUTER.match("POST", "/v1/facts/abc:restore").route.template.endswith(":restore")
    assert ROUTER.match("POST", "/v1/facts:search").params == {}


def test_an_unknown_path_is_404_and_a_known_one_with_another_method_405() -> None:
    with pytest.raises(NotFound):
        ROUTER.match("GET", "/v1/facts/a/b")
    with pytest.raises(MethodNotAllowed) as refused:
        ROUTER.match("DELETE", "/v1/facts/abc")
    assert refused.value.details["allow"] == "GET, PATCH"


def test_a_page_token_reads_back_only_for_its_user_scope_and_time() -> None:
    tokens = PageTokens(b"k" * 32)
    scope = scope_of("facts", type="preference")
    token = tokens.issue("alice", scope, ["2026-11-27T10:00:00+00:00", "f1"], NOW)

    assert tokens.read(token, "alice", scope, NOW) == ["2026-11-27T10:00:00+00:00", "f1"]
    for user, where, when in (
        ("bob", scope, NOW),  # foreign
        ("alice", scope_of("facts"), NOW),  # another filter
        ("alice", scope, NOW + timedelta(days=2)),  # expired
    ):
        with pytest.raises(InvalidPageToken):
            tokens.read(token, user, where, when)


@pytest.mark.parametrize("forged", ["", "x", "a.b.c", "!!!.???", "eyJwIjpbXX0.AAAA"])
def test_a_forged_page_token_is_refused(forged: str) -> None:
    with pytest.raises(InvalidPageToken):
        PageTokens(b"k" * 32).read(forged, "alice", "s", NOW)


def test_a_tampered_position_is_refused() -> None:
    tokens = PageTokens(b"k" * 32)
    token = tokens.issue("alice", "s", [1], NOW)
    payload, mac = token.split(".")
    other = tokens.issue("alice", "s", [999], NOW).split(".")[0]
    with pytest.raises(InvalidPageToken):
        tokens.read(f"{other}.{mac}", "alice", "s", NOW)
    assert payload != other


def test_page_size_zero_means_the_default_and_is_capped_at_the_maximum() -> None:
    assert PageQuery().size(50, 1000) == 50
    assert PageQuery(page_size=5000).size(50, 1000) == 1000


def test_a_stale_etag_is_refused_and_a_current_or_wildcard_one_passes() -> None:
    current = etags.etag_of("text", 1)
    etags.check(etags.wanted(f'"{current}"'), current)
    etags.check(etags.wanted("*"), current)
    etags.check(etags.wanted(None), current)
    with pytest.raises(PreconditionFailed):
        etags.check(etags.wanted(None, etags.etag_of("text", 0)), current)


def test_the_error_body_keeps_the_code_and_adds_aip_193_status_and_reason() -> None:
    body = PreconditionFailed("changed").to_body()["error"]
    assert (body["code"], body["status"]) == ("stale_etag", "FAILED_PRECONDITION")
    assert body["details"][0]["reason"] == "STALE_ETAG"


@pytest.mark.parametrize(
    ("path", "function"),
    [
        ("/v1/chats/c1/messages", "turn"),
        ("/v1/chats", "resume"),
        ("/v1/chats/c1", "resume"),
        ("/v1/chats/c1/questions/q1:answer", "resume"),
        ("/v1/jobs/j1:pause", "resume"),
        ("/v1/facts:search", "memory"),
        ("/v1/pendingItems/p1:resolve", "memory"),
        ("/v1/settings/hitl", "memory"),
        ("/v1/account", "memory"),
        ("/v1/factsx", None),
        ("/timeout", None),
        ("/v1/chats/c1/messages/m1", "resume"),
    ],
)
def test_the_one_origin_routes_each_path_to_its_function(path: str, function: str) -> None:
    assert function_for(path) == function
