"""The search's parts: the fast exact solver, the sampler, inference from play, and blindness."""

from __future__ import annotations

import random

import pytest

from apps.bots import choose_move, search
from apps.bots.infer import Weigher
from apps.bots.solver import Solver, applies
from apps.bots.state import Public
from apps.rules.engine import Match
from apps.rules.presets import make_rules
from apps.rules.tiles import HI, LO
from apps.rules.view import seat_view

from .test_bots import _start, _swapped_replay


def _played(rules, rng: random.Random, moves: int) -> Match:
    match = _start(rules, rng)
    rnd = match.current
    for _ in range(moves):
        if rnd.result is not None:
            break
        match.play(*rng.choice(rnd.legal()))
    return match


@pytest.mark.parametrize("options", [
    {"preset": "partners"}, {"preset": "partners-66"},
    {"preset": "pairs-series", "tie": "replay"}, {"preset": "pairs-series", "tie": "closer_loses"},
    {"preset": "pairs-series", "tie": "opener_loses"},
])
def test_fast_solver_agrees_with_the_general_one(options: dict) -> None:
    rules = make_rules(options, 4)
    rng = random.Random(3)
    checked = 0
    while checked < 12:
        rnd = _played(rules, rng, rng.randrange(14, 20)).current
        if rnd is None:
            continue
        assert applies(rnd)
        solver = Solver(rnd)
        for side in (0, 1):
            exact = search.solve(rnd.copy(), side, list(rnd.fives), float("-inf"), float("inf"))
            assert solver.value(rnd, side) == exact
        checked += 1


def test_fast_solver_only_where_it_applies() -> None:
    rnd = _played(make_rules({"preset": "all-fives"}, 4), random.Random(1), 3).current
    assert not applies(rnd)


def test_sample_respects_passes_and_counts() -> None:
    rules = make_rules({"preset": "pairs-series", "tie": "replay"}, 4)
    rng = random.Random(8)
    seen = 0
    while seen < 10:
        match = _played(rules, rng, rng.randrange(6, 18))
        rnd = match.current
        if rnd is None or not any(rnd.passed_on):
            continue
        pub = Public(seat_view(match, rnd.turn))
        for _ in range(20):
            hands, bones = pub.sample(rng)
            assert bones == []
            assert [len(h) for h in hands] == pub.counts
            assert sorted(t for h in hands for t in h) == sorted(pub.unknown + pub.hand)
            for s, h in enumerate(hands):
                for t in h:
                    assert not pub.void[s] & ((1 << HI[t]) | (1 << LO[t]))
        seen += 1


def test_inference_favours_deals_where_seats_played_their_heaviest() -> None:
    """Seat 1 opened with 2-1: deals where it held 6-6 then are weighed far below others."""
    rules = make_rules({"preset": "pairs-series", "tie": "replay"}, 4)
    mine = [0, 1, 3, 6, 10, 15, 21]  # seat 0: the blanks
    others = [t for t in range(28) if t not in mine]
    two_one = next(t for t in others if (HI[t], LO[t]) == (2, 1))
    six_six = next(t for t in others if (HI[t], LO[t]) == (6, 6))
    rest = [t for t in others if t not in (two_one, six_six)]
    hands = [mine, [two_one] + rest[:6], rest[6:13], rest[13:19] + [six_six]]
    match = Match(rules)
    match.start_round(hands, [], 1)
    match.play(two_one, -1)
    rnd = match.current
    pub = Public(seat_view(match, rnd.turn))
    weigher = Weigher(pub, 0.7)
    assert weigher.active
    heavy = [h[:] for h in rnd.hands]
    light = [h[:] for h in rnd.hands]
    # Swap 6-6 into seat 1's hand in one deal, keep it at seat 3 in the other.
    swap = heavy[1][0]
    heavy[1][0], heavy[3][heavy[3].index(six_six)] = six_six, swap
    assert weigher.log_weight(heavy) < weigher.log_weight(light) - 3


def test_master_blind_with_inference_and_exact_endings() -> None:
    """Late positions (inference weighing many plays, exact solving): swapping hidden tiles
    between two other seats, consistently with the public history, does not change master's
    move."""
    rules = make_rules({"preset": "pairs-series", "tie": "replay"}, 4)
    budget = search.BUDGETS["master"]
    assert budget.infer > 0 and budget.exact_tiles >= 16
    rng = random.Random(11)
    checked = 0
    while checked < 3:
        match = _start(rules, rng)
        rnd = match.current
        for _ in range(rng.randrange(9, 15)):
            if rnd.result is not None:
                break
            match.play(*rng.choice(rnd.legal()))
        if rnd.result is not None or len(rnd.legal()) < 2:
            continue
        seat = rnd.turn
        hands = [h + [t for s, t, _ in rnd.history if s == k and t >= 0]
                 for k, h in enumerate(rnd.hands)]
        alt = _swapped_replay(rules, hands, rnd.history, seat)
        if alt is None:
            continue
        other = Match(rules)
        other.start_round(alt, [], rnd.opener)
        for _seat, t, e in rnd.history:
            other.play(t, e)
        v1, v2 = seat_view(match, seat), seat_view(other, seat)
        assert v1 == v2 and other.current.hands != rnd.hands
        for level in ("expert", "master"):
            assert choose_move(v1, level, random.Random(4)) == \
                choose_move(v2, level, random.Random(4))
        checked += 1


def test_estimate_takes_a_budget_of_its_own() -> None:
    rules = make_rules({"preset": "pairs-series", "tie": "replay"}, 4)
    rng = random.Random(2)
    while True:
        match = _played(rules, rng, 5)
        rnd = match.current
        if rnd is not None:
            pub = Public(seat_view(match, rnd.turn))
            if len(search.distinct(pub)) > 1:
                break
    small = search.Budget(playouts=40, min_deals=8)
    est = search.estimate(pub, random.Random(1), small)
    assert len(est.values) == len(est.candidates) > 1
    assert all(len(v) >= 8 for v in est.values)
    assert 0 <= est.chosen < len(est.candidates)
