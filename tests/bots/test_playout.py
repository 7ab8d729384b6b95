"""The partnership games' fast playout plays exactly as the engine's rollouts do."""

from __future__ import annotations

import random

import pytest

from apps.bots import playout, search
from apps.bots.state import Public, shuffle
from apps.rules.presets import make_rules
from apps.rules.view import seat_view

from .test_search import _played

OPTIONS = [
    {"preset": "partners"}, {"preset": "partners-66"},
    {"preset": "pairs-series", "tie": "replay"}, {"preset": "pairs-series", "tie": "closer_loses"},
    {"preset": "pairs-series", "tie": "opener_loses"},
]


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("blocking", [False, True])
def test_same_value_as_the_engine_rollout_on_every_deal(options: dict, blocking: bool) -> None:
    """From positions at every stage of a round (blocked rounds and exact ties included), the
    same seed gives the same value and leaves the same hands."""
    rules = make_rules(options, 4)
    rng = random.Random(7)
    engine_rollout = search.rollout_blocking if blocking else search.rollout
    checked = blocked = 0
    while checked < 400:
        match = _played(rules, rng, rng.randrange(1, 24))
        w = match.rounds[-1]
        if w.result is not None or not playout.applies(w):
            continue
        seed = rng.getrandbits(32)
        for side in (0, 1):
            fast = playout.play_out(w, random.Random(seed), side, blocking=blocking)
            slow = w.copy()
            engine_rollout(slow, random.Random(seed))
            assert fast == search.side_value(slow, side, [0, 0, 0, 0])
        blocked += slow.result.reason == "blocked"
        checked += 1
    assert blocked > 10  # the blocked ends were compared too, not only dominoes


def test_an_unopened_round_and_other_games_take_the_engine() -> None:
    rng = random.Random(2)
    match = _played(make_rules({"preset": "pairs-series", "tie": "replay"}, 4), rng, 0)
    assert not playout.applies(match.rounds[-1])  # nothing on the table: opening has no ends
    for options, players in (({"preset": "all-fives"}, 4), ({"preset": "draw"}, 2),
                             ({"preset": "block"}, 3)):
        match = _played(make_rules(options, players), rng, 3)
        assert not playout.applies(match.rounds[-1])


def test_the_search_makes_the_same_choices_with_the_fast_playout(monkeypatch) -> None:
    """Whole decisions of expert and master (halving, inference, exact endings off here) are
    the same move and the same values deal by deal with the fast playout as without it."""
    rules = make_rules({"preset": "pairs-series", "tie": "replay"}, 4)
    rng = random.Random(5)
    budget = search.Budget(playouts=120, min_deals=12, blocking=True, halving=True, infer=0.7)
    compared = 0
    while compared < 6:
        match = _played(rules, rng, rng.randrange(1, 10))
        rnd = match.current
        if rnd.result is not None or len(rnd.legal()) < 2:
            continue
        pub = Public(seat_view(match, rnd.turn))
        fast = search.estimate(pub, random.Random(1), budget)
        with monkeypatch.context() as patched:
            # The search holds the name itself (``from .playout import ...``): patched there.
            patched.setattr(search, "partnership_playout_applies", lambda w: False)
            slow = search.estimate(pub, random.Random(1), budget)
        assert (fast.chosen, fast.values) == (slow.chosen, slow.values)
        compared += 1


def test_the_samplers_shuffle_is_pythons() -> None:
    for seed in range(300):
        for size in (0, 1, 2, 3, 7, 21, 28):
            mine, theirs = list(range(size)), list(range(size))
            a, b = random.Random(seed), random.Random(seed)
            shuffle(mine, a)
            b.shuffle(theirs)
            assert mine == theirs and a.random() == b.random()
