"""Beat's pass over due work (apps/core/beat.py), which the tables' sweep, the tournaments'
tick and the club's unfilled stakes share: one call per item, refusals skipped."""

from __future__ import annotations

import pytest

from apps.core.beat import act_on_each
from apps.core.errors import ServiceError


def test_each_item_is_acted_on_and_an_item_that_moved_on_is_skipped():
    seen = []

    def act(item: int) -> None:
        seen.append(item)
        if item == 2:
            raise ServiceError("not due any more", code="not_due")

    assert act_on_each(due=[1, 2, 3], act=act) == 2
    assert seen == [1, 2, 3]


def test_the_due_items_are_read_before_the_first_call():
    due = [1, 2]

    def act(item: int) -> None:
        if item < 10:
            due.append(item + 10)  # the calls change the rows the query read

    assert act_on_each(due=iter(due), act=act) == 2


def test_another_failure_stops_the_pass_for_beat_to_start_over():
    def act(item: int) -> None:
        raise RuntimeError("the database went away")

    with pytest.raises(RuntimeError):
        act_on_each(due=[1], act=act)
