"""The accuracy formula and the marks' thresholds (apps/bots/accuracy.py, docs/review.md)."""

from __future__ import annotations

import pytest

from apps.bots import accuracy, review


def test_the_bots_move_is_100_and_accuracy_falls_with_the_points_given_up() -> None:
    assert accuracy.move_accuracy(0.0) == 100.0
    values = [accuracy.move_accuracy(x) for x in (0, 0.5, 1, 3, 8, 16, 30, 60)]
    assert values == sorted(values, reverse=True) and len(set(values)) == len(values)
    # The documented figures.
    assert accuracy.move_accuracy(3) == pytest.approx(78.0, abs=0.1)
    assert accuracy.move_accuracy(8) == pytest.approx(51.2, abs=0.1)
    assert accuracy.move_accuracy(16) == pytest.approx(25.5, abs=0.1)
    assert accuracy.move_accuracy(60) == 0.0
    # Never above 100, never below 0 (a loss is never negative, but the formula holds anyway).
    assert accuracy.move_accuracy(-4) == 100.0


def test_marks_follow_the_thresholds_and_the_certainty() -> None:
    assert accuracy.classify(2.9, 1.0) is None
    assert accuracy.classify(3.0, 1.0) == "inaccuracy"
    assert accuracy.classify(7.9, 1.0) == "inaccuracy"
    assert accuracy.classify(8.0, 1.0) == "mistake"
    assert accuracy.classify(16.0, 1.0) == "blunder"
    assert accuracy.classify(40.0, 0.89) is None
    # The review marks with the same numbers.
    assert review.THRESHOLDS is accuracy.THRESHOLDS and review.SURE == accuracy.SURE


def test_a_match_accuracy_is_the_mean_of_the_mean_and_the_harmonic_mean() -> None:
    assert accuracy.match_accuracy([]) is None
    assert accuracy.match_accuracy([0, 0, 0]) == 100.0
    perfect = [0.0] * 19
    one_blunder = accuracy.match_accuracy(perfect + [40.0])
    # mean (19 * 100 + 0) / 20 = 95; harmonic (floor 5) 20 / (19 / 100 + 1 / 5) = 51.3
    assert one_blunder == pytest.approx((95 + 20 / (0.19 + 0.2)) / 2, abs=0.1)
    # Spread small losses cost less than the same points in one move.
    assert accuracy.match_accuracy([2.0] * 10) > accuracy.match_accuracy([0.0] * 9 + [20.0])


RESULT = {"rounds": [
    {"moves": [
        {"index": 0, "seat": 0, "forced": False, "loss": 0.0, "mark": None},
        {"index": 1, "seat": 1, "forced": False, "loss": 9.0, "mark": "mistake"},
        {"index": 2, "seat": 0, "forced": True, "loss": 0.0, "mark": None},
        {"index": 3, "seat": 0, "forced": False, "loss": 20.0, "mark": "blunder"}]},
    {"moves": [
        {"index": 0, "seat": 1, "forced": False, "loss": 4.0, "mark": "inaccuracy"},
        {"index": 1, "seat": 0, "forced": False, "loss": 1.0, "mark": None}]}]}


def test_a_players_numbers_follow_their_seat_round_by_round() -> None:
    # Seat 0 in round 1, seat 1 in round 2 (seats changed between rounds).
    mine = accuracy.player_accuracy(RESULT, [0, 1])
    assert mine["judged"] == 3 and mine["loss"] == 24.0
    assert (mine["inaccuracy"], mine["mistake"], mine["blunder"]) == (1, 0, 1)
    assert mine["accuracy"] == accuracy.match_accuracy([0.0, 20.0, 4.0])
    absent = accuracy.player_accuracy(RESULT, [None, None])
    assert absent == {"accuracy": None, "judged": 0, "loss": 0.0, "inaccuracy": 0,
                      "mistake": 0, "blunder": 0}
    moves = accuracy.move_accuracies(RESULT)
    assert "0:2" not in moves  # forced: not a choice
    assert moves["0:0"] == 100.0 and moves["0:3"] == accuracy.move_accuracy(20.0)
