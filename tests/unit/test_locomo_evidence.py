"""The real LoCoMo file's observations cite a list of dia ids; ours one."""

from __future__ import annotations

import pytest

from testkit.locomo import evidence_ids, split_ids


@pytest.mark.parametrize(
    ("evidence", "ids"),
    [("D1:3", ["D1:3"]), (["D1:3", "D1:5"], ["D1:3", "D1:5"]), ([], [])],
)
def test_one_id_or_a_list_round_trips(evidence: str | list[str], ids: list[str]) -> None:
    assert split_ids(evidence_ids(evidence)) == ids
