"""HashEmbedder: deterministic, unit-length, and similar texts share components."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from shared.fakes.scripted_llm import HashEmbedder


def cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_same_text_gives_the_same_vector_across_instances() -> None:
    first = HashEmbedder(128).embed(["I love my dog"])[0]
    second = HashEmbedder(128).embed(["I love my dog"])[0]

    assert first == second


def test_vectors_are_unit_length_with_the_configured_dimension() -> None:
    vectors = HashEmbedder(96).embed(["one", "two words", ""])

    assert [len(v) for v in vectors] == [96, 96, 96]
    assert all(math.isclose(math.fsum(x * x for x in v), 1.0) for v in vectors)


def test_similar_texts_are_closer_than_unrelated_ones() -> None:
    dog, dogs, market = HashEmbedder(256).embed(
        ["I love my dog", "I really love my dogs", "The stock market fell"]
    )

    assert cos(dog, dogs) > cos(dog, market)
    assert cos(dog, dogs) > 0.5


def test_shared_word_pieces_count_even_without_a_shared_word() -> None:
    walking, walked, quantum = HashEmbedder(256).embed(["walking", "walked", "quantum"])

    assert cos(walking, walked) > cos(walking, quantum)


def test_case_and_punctuation_do_not_matter() -> None:
    a, b = HashEmbedder(64).embed(["Hello, World!", "hello world"])

    assert math.isclose(cos(a, b), 1.0)


def test_batch_order_is_kept_and_empty_batch_is_empty() -> None:
    embedder = HashEmbedder(32)

    assert embedder.embed([]) == []
    assert embedder.embed(["b", "a"]) == [embedder.embed(["b"])[0], embedder.embed(["a"])[0]]


def test_identity_fields() -> None:
    embedder = HashEmbedder(768)

    assert embedder.dimension == 768
    assert embedder.model_name == "hash-768"


@given(st.text(max_size=200))
def test_any_text_gives_a_unit_vector(text: str) -> None:
    (vector,) = HashEmbedder(48).embed([text])

    assert len(vector) == 48
    assert math.isclose(math.fsum(x * x for x in vector), 1.0, rel_tol=1e-9)
