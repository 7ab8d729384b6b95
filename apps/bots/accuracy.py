"""Accuracy: the review's points given up, as numbers players know from chess sites.

Pure Python (no Django): the review (``apps.bots.review``) marks its moves with :func:`classify`,
the site turns a stored review into each move's and each player's accuracy with
:func:`move_accuracy` and :func:`player_accuracy`. ``docs/review.md`` ("Accuracy") gives the
formula, the thresholds and why.

- A move's accuracy is shaped like Lichess's (``103.1668 * exp(-0.04354 * d) - 3.1669`` for a
  drop ``d`` in winning chances): 100 for the bot's move, falling exponentially with the points
  the move gave up, here ``103.1668 * exp(-RATE * loss) - 3.1668`` clamped to 0..100.
- A player's accuracy over a match is the mean of the arithmetic and the harmonic means of
  their judged moves' accuracies (forced moves are not choices and do not count), as Lichess
  mixes a mean with a harmonic one so that one blunder among good moves still shows.
- Marks, like GNU Backgammon's doubtful / bad / very bad: ``inaccuracy``, ``mistake``,
  ``blunder`` by the points given up, when the evaluation is sure enough the move is worse.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

#: Points given up for each mark (the loss compared is the review's rounded one).
THRESHOLDS = {"inaccuracy": 3.0, "mistake": 8.0, "blunder": 16.0}
#: How sure the evaluation must be that the played move is worse before marking it.
SURE = 0.9
#: The marks, lightest first.
MARKS = ("inaccuracy", "mistake", "blunder")

#: Lichess's constants, with the exponent's rate per point of a round instead of per percent
#: of winning chances: 1 point gives 92, 3 points 78, 8 points 51, 16 points 25.5, 30 points 6.
SCALE = 103.1668
OFFSET = 3.1668
RATE = 0.08
#: A move's accuracy in the harmonic mean is at least this, so that one move that threw a
#: whole round away weighs like a few bad ones, not like the whole match.
HARMONIC_FLOOR = 5.0


def classify(loss: float, sure: float) -> str | None:
    """The mark of a move that gave up ``loss`` points, ``sure`` being how sure the evaluation
    is that it is worse than the bot's: None, ``inaccuracy``, ``mistake`` or ``blunder``."""
    if sure < SURE:
        return None
    for mark in reversed(MARKS):
        if loss >= THRESHOLDS[mark]:
            return mark
    return None


def move_accuracy(loss: float) -> float:
    """100 for the bot's move (no loss), falling with the points given up; never below 0."""
    value = SCALE * math.exp(-RATE * max(0.0, loss)) - OFFSET
    return round(min(100.0, max(0.0, value)), 1)


def match_accuracy(losses: Iterable[float]) -> float | None:
    """The accuracy over judged moves that gave up ``losses``; None with no judged move."""
    values = [move_accuracy(x) for x in losses]
    if not values:
        return None
    mean = sum(values) / len(values)
    harmonic = len(values) / sum(1 / max(HARMONIC_FLOOR, v) for v in values)
    return round((mean + harmonic) / 2, 1)


def player_accuracy(result: dict, seats: list[int | None]) -> dict:
    """One player's numbers in a review (``review_record``'s output): ``seats[k]`` is the seat
    they held in round ``k`` (None: not at the table that round).

    ``{"accuracy": float | None, "judged": n, "loss": points given up in all, "inaccuracy": n,
    "mistake": n, "blunder": n}``; forced moves are left out."""
    losses: list[float] = []
    counts = dict.fromkeys(MARKS, 0)
    for k, rnd in enumerate(result.get("rounds", [])):
        seat = seats[k] if k < len(seats) else None
        if seat is None:
            continue
        for move in rnd.get("moves", []):
            if move.get("seat") != seat or move.get("forced"):
                continue
            losses.append(float(move.get("loss", 0.0)))
            mark = move.get("mark")
            if mark in counts:
                counts[mark] += 1
    return {"accuracy": match_accuracy(losses), "judged": len(losses),
            "loss": round(sum(losses), 1), **counts}


def move_accuracies(result: dict) -> dict[str, float]:
    """Every judged move's accuracy, keyed ``"<round>:<index>"`` (round from 0, as the replay
    counts); forced moves have none."""
    return {f"{k}:{move['index']}": move_accuracy(float(move.get("loss", 0.0)))
            for k, rnd in enumerate(result.get("rounds", []))
            for move in rnd.get("moves", []) if not move.get("forced")}
