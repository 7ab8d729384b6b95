"""Targets, overshoot, ties at the top and series, replayed through the harness."""

from __future__ import annotations

import pytest

from apps.rules.harness import replay

from .play import random_match_record
from .records import BLOCK_PLAY, BLOCK_TIE_HANDS, BLOCK_WIN_HANDS, deal, record, rotate

BLOCK_TIE = deal(BLOCK_TIE_HANDS, play=BLOCK_PLAY)
BLOCK_WIN = deal(BLOCK_WIN_HANDS, play=BLOCK_PLAY)  # team 0 wins: 49 (partners), 90 (pairs)


def ok(rec: dict) -> dict:
    out = replay(rec)
    assert out["ok"], out
    return out


def test_partners_match_ends_at_the_target_and_overshoot_counts():
    # Round 2 is opened by seat 1; rotated, seat 2 closes a tie and its team 0 takes it.
    rec = record("partners", [BLOCK_WIN, rotate(BLOCK_TIE, 1)], target=50)
    out = ok(rec)
    assert out["scores"] == [94, 0]
    assert out["match"] == {"over": True, "winner": {"team": 0}, "next_opener": None,
                            "games": [0, 0]}
    more = record("partners", [BLOCK_WIN, rotate(BLOCK_TIE, 1), rotate(BLOCK_WIN, 2)],
                  target=50)
    assert replay(more)["error"]["code"] == "bad_record"
    # With the default target of 100 the same two rounds leave the match open.
    out = ok(record("partners", [BLOCK_WIN, rotate(BLOCK_TIE, 1)]))
    assert out["match"]["over"] is False and out["match"]["next_opener"] == 2


def test_partners_66_reaching_50_ends_the_match():
    rounds = [BLOCK_WIN, rotate(BLOCK_TIE, 1)]
    out = ok(record("partners-66", rounds))
    assert out["scores"] == [49, 45]  # seat 2 closed the tie, so team 1 took it
    assert not out["match"]["over"]
    out = ok(record("partners-66", [*rounds, rotate(BLOCK_WIN, 2)]))
    assert out["scores"] == [98, 45]
    assert out["match"]["over"] and out["match"]["winner"] == {"team": 0}


@pytest.mark.parametrize("best_of", [3, 5])
def test_pairs_series_best_of(best_of):
    # Each round is a whole game at target 50; the opener rotates across games, and with
    # it the winning seats, so the games alternate between the pairs.
    need = best_of // 2 + 1
    rounds = [rotate(BLOCK_WIN, k) | {"opener": 0} if k == 0 else rotate(BLOCK_WIN, k)
              for k in range(2 * need - 1)]
    for k in range(len(rounds)):
        out = ok(record("pairs-series", rounds[:k + 1], target=50, best_of=best_of))
        winner = k % 2
        assert out["scores"] == ([90, 0] if winner == 0 else [0, 90])  # the game's totals
        wins = [(k + 2) // 2, (k + 1) // 2]
        assert out["match"]["games"] == wins
        assert out["match"]["over"] == (k == len(rounds) - 1)
    assert out["match"]["winner"] == {"team": 0}
    assert out["match"]["next_opener"] is None


def test_pairs_series_scores_restart_with_each_game():
    rounds = [BLOCK_WIN | {"opener": 0}, rotate(BLOCK_WIN, 1) | {"moves": []}]
    out = ok(record("pairs-series", rounds, target=50, best_of=3))
    assert out["scores"] == [0, 0]
    assert out["match"]["games"] == [1, 0]
    assert out["current"]["turn"] == 1


def test_pairs_series_game_needs_the_target():
    out = ok(record("pairs-series", [BLOCK_WIN | {"opener": 0}], best_of=3))
    assert out["scores"] == [90, 0] and out["match"]["games"] == [0, 0]


def _tie_at_top_record() -> tuple[dict, int]:
    for seed in range(2000):
        rec = random_match_record({"preset": "all-fives", "target": 25}, 2, seed)
        for k in range(len(rec["rounds"])):
            out = replay(dict(rec, rounds=rec["rounds"][:k + 1]))
            top = max(out["scores"])
            if top >= 25 and out["scores"].count(top) > 1:
                return rec, k
    raise AssertionError("no tie at the top found")


def test_a_tie_at_the_top_plays_another_round():
    rec, k = _tie_at_top_record()
    out = ok(dict(rec, rounds=rec["rounds"][:k + 1]))
    assert out["match"]["over"] is False and out["match"]["next_opener"] is not None
    final = ok(rec)
    assert final["match"]["over"]
    top = max(final["scores"])
    assert final["scores"].count(top) == 1
    assert final["match"]["winner"] == {"seat": final["scores"].index(top)}


@pytest.mark.parametrize("players", [2, 3, 4])
def test_all_fives_round_points_are_rounded_to_the_nearest_five(players):
    seen = set()
    for seed in range(400):
        rec = random_match_record({"preset": "all-fives"}, players, seed, max_rounds=1)
        res = ok(rec)["rounds"][0]["result"]
        if res["winner"] is None:
            continue
        w = res["winner"]["seat"]
        others = sum(res["pips"]) - res["pips"][w]
        assert res["points"] % 5 == 0
        assert abs(res["points"] - others) <= 2
        seen.add(others % 5)
    assert seen == {0, 1, 2, 3, 4}


@pytest.mark.parametrize(("preset", "players", "target"), [
    ("partners", None, 100), ("partners-66", None, 50), ("pairs-series", None, 300),
    ("draw", 2, 100), ("draw", 3, 61), ("draw", 4, 61), ("block", 2, 100), ("block", 4, 61),
    ("all-fives", 3, 150), ("tranca", 3, 100), ("tranca", 4, 100),
])
def test_random_matches_end_with_one_winner_at_the_default_target(preset, players, target):
    for seed in range(3):
        rec = random_match_record({"preset": preset}, players, seed)
        out = ok(rec)
        assert out["match"]["over"]
        scores = out["scores"]
        assert max(scores) >= target
        before = ok(dict(rec, rounds=rec["rounds"][:-1]))
        assert not before["match"]["over"]
        top = max(scores)
        assert scores.count(top) == 1
        side = out["match"]["winner"]
        assert scores[side.get("team", side.get("seat"))] == top
