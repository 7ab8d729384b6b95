"""Which endings the search solves exactly: small ones only. A two-player ending with hands of 4
and 12 tiles (nothing left to draw) passed the old rule of "at most N tiles in hands" and one
master decision ran for minutes, in the site's worker as in a review."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from apps.bots import choose_move, review, search
from apps.bots.state import Public

RECORD = json.loads((Path(__file__).parent / "data" / "draw-two-lopsided-ending.json").read_text())


def _view(round_index: int, move_index: int) -> dict:
    for k, i, _raw, view, _move in review._positions(RECORD, [0, 1]):
        if (k, i) == (round_index, move_index):
            return view
    raise AssertionError("no such move")


def test_a_lopsided_two_player_ending_is_not_solved_exactly():
    pub = Public(_view(1, 13))
    assert pub.boneyard_count == 0 and sorted(pub.counts) == [4, 12]
    assert not search.exact_applies(pub, search.BUDGETS["master"])


@pytest.mark.timeout(120)
def test_the_master_decides_that_ending():
    view = _view(1, 13)
    move = choose_move(view, "master", random.Random(3))
    assert move in view["legal"]


def test_a_small_partners_ending_is_still_solved_exactly():
    from apps.rules.engine import Match, deal
    from apps.rules.presets import make_rules
    from apps.rules.view import seat_view

    rng = random.Random(5)
    match = Match(make_rules({"preset": "partners"}, 4))
    hands, bones, _opener = deal(match.rules, rng)
    match.start_round(hands, bones, None)
    # Play heaviest-first until 16 tiles or fewer are left in hands.
    while sum(len(h) for h in match.current.hands) > 16 and match.current.result is None:
        legal = match.current.legal()
        match.play(*legal[0])
    assert match.current.result is None
    pub = Public(seat_view(match, match.current.turn))
    assert search.exact_applies(pub, search.BUDGETS["master"])
    assert not search.exact_applies(pub, search.BUDGETS["expert"])  # expert never solves
