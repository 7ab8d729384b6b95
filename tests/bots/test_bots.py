"""Bots: legal moves everywhere, fairness, medium's rules of thumb, expert beats easy."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from apps.bots import LEVELS, choose_move
from apps.rules.engine import Match, Round, deal
from apps.rules.presets import make_rules
from apps.rules.view import seat_view
from tools.arena import bot_chooser, play_round

CASES = [("partners", 4), ("partners-66", 4), ("pairs-series", 4), ("draw", 2), ("draw", 3),
         ("draw", 4), ("block", 2), ("block", 3), ("block", 4), ("all-fives", 2),
         ("all-fives", 3), ("all-fives", 4), ("tranca", 2), ("tranca", 3), ("tranca", 4)]


def _start(rules, rng: random.Random) -> Match:
    match = Match(rules)
    hands, bones, opener = deal(rules, rng)
    derived, _ = match.opener_for(hands)
    match.start_round(hands, bones, opener if derived is None else None)
    return match


def _random_positions(preset: str, players: int, count: int, seed: int):
    """Views of the seat to play, at random points of randomly played rounds."""
    rules = make_rules({"preset": preset}, players)
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        match = _start(rules, rng)
        stop = rng.randrange(0, 20)
        rnd = match.current
        for _ in range(stop):
            if rnd.result is not None:
                break
            match.play(*rng.choice(rnd.legal()))
        if rnd.result is None:
            out.append(seat_view(match, rnd.turn))
    return out


@pytest.mark.parametrize("preset,players", CASES)
def test_every_level_returns_a_legal_move(preset: str, players: int) -> None:
    for i, view in enumerate(_random_positions(preset, players, 4, seed=hash(preset) % 97)):
        for level in LEVELS:
            if level == "master" and i > 0:
                continue  # master is slow; one position per case shows it is legal
            move = choose_move(view, level, random.Random(i))
            assert move in view["legal"], (preset, players, level, move)


def _view(**overrides) -> dict:
    view = {
        "seat": 0, "players": 4,
        "rules": {"preset": "partners", "target": 100, "hand_size": 7, "turn_seconds": 45},
        "round": 0, "hand": [], "turn": 0, "ends": {}, "moves": [], "draws": [],
        "hand_counts": [7, 7, 7, 7], "boneyard_count": 0, "passed_on": {},
        "fives": [0, 0, 0, 0], "scores": [0, 0], "legal": [], "revealed": None,
    }
    view.update(overrides)
    return view


def test_fairness_same_view_same_move_whatever_the_hidden_hands() -> None:
    """Two deals agreeing on seat 0's hand and the public history, differing elsewhere."""
    rules = make_rules({"preset": "partners"}, 4)
    mine = [27, 26, 20, 14, 9, 5, 0]  # seat 0 holds 6-6, so it opens
    others = [t for t in range(28) if t not in mine]
    for level in LEVELS:
        moves = []
        for seed in (1, 2):
            rng = random.Random(seed)
            hidden = others[:]
            rng.shuffle(hidden)
            hands = [mine[:], hidden[:7], hidden[7:14], hidden[14:]]
            match = Match(rules)
            match.start_round(hands, [])
            view = seat_view(match, 0)
            moves.append(choose_move(view, level, random.Random(7)))
        assert moves[0] == moves[1], level


def _swapped_replay(rules, hands, history, seat):
    """The same public history from a deal where two other seats swapped an unplayed tile.

    The swap respects what those seats passed on, so every move stays legal; ``None`` when no
    such swap exists.
    """
    from apps.rules.tiles import HI, LO

    rnd = Round(rules, hands, [], next(s for s, _, _ in history))
    for _, t, e in history:
        rnd.play(t, e)
    others = [s for s in range(rules.players) if s != seat]
    for a in others:
        for b in others:
            if a >= b:
                continue
            for ta in rnd.hands[a]:
                for tb in rnd.hands[b]:
                    if rnd.passed_on[b] & ((1 << HI[ta]) | (1 << LO[ta])):
                        continue
                    if rnd.passed_on[a] & ((1 << HI[tb]) | (1 << LO[tb])):
                        continue
                    alt = [h[:] for h in hands]
                    alt[a][alt[a].index(ta)] = tb
                    alt[b][alt[b].index(tb)] = ta
                    return alt
    return None


def test_fairness_swapped_hidden_tiles_mid_round() -> None:
    """Real mid-round positions replayed from a deal with hidden tiles swapped: same move."""
    rules = make_rules({"preset": "partners"}, 4)
    rng = random.Random(5)
    checked = 0
    while checked < 4:
        match = _start(rules, rng)
        rnd = match.current
        for _ in range(rng.randrange(4, 14)):
            if rnd.result is not None:
                break
            match.play(*rng.choice(rnd.legal()))
        if rnd.result is not None or len(rnd.legal()) < 2:
            continue
        seat = rnd.turn
        dealt = match.rounds[0]
        hands = [h + [t for s, t, _ in rnd.history if s == k and t >= 0]
                 for k, h in enumerate(rnd.hands)]
        alt = _swapped_replay(rules, hands, rnd.history, seat)
        if alt is None:
            continue
        other = Match(rules)
        other.start_round(alt, [], None)
        for _seat, t, e in rnd.history:
            other.play(t, e)
        v1, v2 = seat_view(match, seat), seat_view(other, seat)
        assert v1 == v2 and other.current.hands != dealt.hands
        for level in ("easy", "medium", "expert"):
            assert choose_move(v1, level, random.Random(9)) == \
                choose_move(v2, level, random.Random(9))
        checked += 1


def test_fairness_mid_round_with_passes() -> None:
    """A mid-round view built by hand: the same view and rng state give the same move."""
    view = _view(
        hand=["6-6", "5-3", "4-4", "2-1", "1-0"], ends={"A": 5, "B": 0},
        moves=[{"seat": 0, "play": "6-2"}, {"seat": 1, "play": "2-2", "end": "B"},
               {"seat": 2, "pass": True}, {"seat": 3, "play": "6-5", "end": "A"},
               {"seat": 0, "play": "5-5", "end": "A"}, {"seat": 1, "pass": True},
               {"seat": 2, "pass": True}, {"seat": 3, "play": "2-0", "end": "B"}],
        hand_counts=[5, 6, 7, 5], passed_on={"1": [5, 2], "2": [6, 5, 2]},
        legal=[{"play": "5-3", "end": "A"}, {"play": "1-0", "end": "B"}],
    )
    for level in ("easy", "medium", "expert"):  # master searches the same way, only longer
        a = choose_move(dict(view), level, random.Random(3))
        b = choose_move(dict(view), level, random.Random(3))
        assert a == b and a in view["legal"]


def test_medium_prefers_a_heavy_tile() -> None:
    view = _view(hand=["6-5", "1-0", "3-2", "4-1", "2-0", "5-0", "3-1"],
                 legal=[{"play": t} for t in ["6-5", "1-0", "3-2", "4-1", "2-0", "5-0", "3-1"]])
    assert choose_move(view, "medium", random.Random(0)) == {"play": "6-5"}


def test_medium_sheds_a_double() -> None:
    # 4-4 (8 pips) beats 4-3 (7 pips) and the lighter tiles because doubles get stuck.
    view = _view(hand=["4-4", "4-3", "2-1", "6-0", "5-1", "3-0", "6-6"],
                 ends={"A": 4, "B": 1}, hand_counts=[7, 7, 6, 6],
                 moves=[{"seat": 2, "play": "4-1"}, {"seat": 3, "play": "1-1", "end": "B"}],
                 legal=[{"play": "4-4", "end": "A"}, {"play": "4-3", "end": "A"},
                        {"play": "2-1", "end": "B"}, {"play": "5-1", "end": "B"}])
    assert choose_move(view, "medium", random.Random(0)) == {"play": "4-4", "end": "A"}


def test_medium_leaves_an_end_the_opponent_passed_on() -> None:
    # Seat 1, an opponent, passed on 5 and 3. 5-1 on A and 2-4 on B weigh the same; 2-4 keeps
    # the 5 showing.
    view = _view(
        hand=["5-1", "2-4", "6-0", "6-6", "1-0", "3-0"], ends={"A": 5, "B": 2},
        moves=[{"seat": 0, "play": "5-3"}, {"seat": 1, "pass": True},
               {"seat": 2, "play": "5-5", "end": "A"}, {"seat": 3, "play": "3-2", "end": "B"}],
        hand_counts=[6, 7, 6, 6], passed_on={"1": [5, 3]},
        legal=[{"play": "5-1", "end": "A"}, {"play": "2-4", "end": "B"}],
    )
    assert choose_move(view, "medium", random.Random(0)) == {"play": "2-4", "end": "B"}


def test_medium_scores_in_all_fives() -> None:
    # Ends 5 and 4: 6-5 on A leaves 6+4 = 10 and scores; 4-2 on B leaves 5+2 = 7.
    view = _view(
        players=2, rules={"preset": "all-fives", "target": 150, "hand_size": 7,
                          "turn_seconds": None},
        hand=["6-5", "4-2", "3-1", "2-0", "1-0", "6-2"], ends={"A": 5, "B": 4},
        moves=[{"seat": 1, "play": "5-4"}], hand_counts=[6, 6], boneyard_count=14,
        fives=[0, 0], scores=[0, 0],
        legal=[{"play": "6-5", "end": "A"}, {"play": "4-2", "end": "B"}],
    )
    view["hand"] = ["6-5", "4-2", "3-1", "2-0", "1-0", "6-2", "0-0"]
    view["hand_counts"] = [7, 6]
    assert choose_move(view, "medium", random.Random(0)) == {"play": "6-5", "end": "A"}


@pytest.mark.slow
def test_expert_beats_easy() -> None:
    rules = make_rules({"preset": "partners"}, 4)
    choosers = [bot_chooser("expert"), bot_chooser("easy")]
    points = [0, 0]
    times: list[list[float]] = [[], []]
    for i in range(12):
        hands, bones, opener = deal(rules, random.Random(1000 + i))
        for swap in (0, 1):
            seat_side = [(s + swap) % 2 for s in range(4)]
            pts, _ = play_round(rules, hands, bones, opener, seat_side, choosers, 10 * i + swap,
                                times)
            points[0] += pts[0]
            points[1] += pts[1]
    assert points[0] > 0.6 * (points[0] + points[1]), points


@pytest.mark.slow
def test_bots_import_no_django() -> None:
    code = ("import sys, apps.bots, tools.arena; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('django', 'dominoes')]; "
            "sys.exit(1 if bad else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
