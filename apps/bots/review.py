"""The review of a finished match, move by move, by the master bot's own evaluation.

``review_record(record, seats=[0])`` replays a game record (the harness format of
``shared/specs/harness.md``, as ``/t/<code>/record.json`` downloads it) and, for every move of the
chosen seats, asks :func:`apps.bots.search.estimate` what it thinks of each distinct legal move
**from that seat's view at that moment** (``apps.rules.view.seat_view`` on the match replayed up
to just before the move). The evaluation gets the view and nothing else, exactly like the bot:
the other hands and the boneyard of the record are never read, so two records that agree on a
seat's hand and on the public history give that seat the same verdict.

The review budget (:data:`REVIEW_BUDGET`) gives every candidate the same deals (no halving), so
the played move is measured as well as the best one and the two compare deal by deal. Each move
is judged with its own ``random.Random`` seeded from (seed, round, move index): reviewing one
seat or all of them gives the same verdict for the same move. ``docs/review.md`` explains the
choices (thresholds, reasons); this docstring is the format.

Output (plain JSON)::

    {"ok": true, "version": 1, "seed": 0, "seats": [0, 2],
     "thresholds": {"inaccuracy": 3.0, "mistake": 8.0, "blunder": 16.0, "sure": 0.9},
     "rounds": [{
        "number": 1,                        # 1 for the record's first round
        "moves": [{                         # every move of a reviewed seat, passes included
            "index": 4,                     # into record["rounds"][number - 1]["moves"]
            "seat": 0,
            "played": {"play": "6-4", "end": "B"},   # as the record wrote it, or {"pass": true}
            "best": {"play": "6-6", "end": "A"},     # the bot's choice; == played when it agrees
            "forced": false,                # one distinct move only: not judged, loss 0
            "loss": 9.3,                    # mean(best) - mean(played), paired deals, >= 0
            "stderr": 1.2,                  # standard error of that paired difference
            "sure": 1.0,                    # Phi(loss / stderr): how sure played is worse
            "mark": "mistake",              # null | "inaccuracy" | "mistake" | "blunder"
            "expected": -4.1,               # the played move's value for the mover's side
            "expected_for": [-4.1, 4.1],    # the same, seen from each side (index = side)
            "reasons": [{"code": "double_held", "tile": "6-6"}]}],
        "summary": {"0": {"loss": 12.4, "judged": 5, "inaccuracies": 1, "mistakes": 1,
                          "blunders": 0,
                          "reasons": [{"code": "double_held", "count": 1}]}}}]}

A value is what the search values a move by: from that move to the end of the round, the points
of the mover's side (round-end points, and fives scored in ``all-fives``) minus the mean of the
other sides' points. ``mark`` needs both the loss (``loss >= thresholds[mark]``) and the
certainty (``sure >= thresholds["sure"]``); ``reasons`` are given for marked moves only, by the
tests of ``docs/review.md``. A record the harness refuses gives the harness's refusal
(``{"ok": false, "error": {...}}``).

CLI: ``python -m apps.bots.review RECORD.json [--seat N ...] [--seed S] [--deals D]`` (``-`` reads
standard input) prints the same JSON; exit status 0 when reviewed, 1 when a move of the record
is refused, 2 when the record cannot be read.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections.abc import Callable
from dataclasses import replace

from apps.rules import harness
from apps.rules.engine import END_NAMES, OPEN, OPEN_FLIPPED, Match, Round
from apps.rules.errors import RuleError
from apps.rules.presets import make_rules
from apps.rules.tiles import HI, IS_DOUBLE, LO, NAMES, PIPS, parse_tile
from apps.rules.view import seat_view

from . import accuracy, search
from .solver import Solver, applies
from .state import Public

VERSION = 1

# The marks' points given up and certainty (docs/review.md says why these), shared with the
# accuracy the site shows.
THRESHOLDS = accuracy.THRESHOLDS
SURE = accuracy.SURE
#: Pips by which the bot's tile must outweigh the played one for ``heavy_kept``.
HEAVY_PIPS = 4
#: Fives points the bot's move must score beyond the played one for ``fives_missed``.
FIVES_POINTS = 5

#: The master's budget (its rollout policy, exact endings, and whatever else it weighs deals by)
#: with every candidate given the same deals (no halving): ``max(min_deals, playouts //
#: candidates)`` rollouts each, or ``exact_deals`` exact solves once at most ``exact_tiles`` tiles
#: are left in hands and nothing is left to draw. Tuned with ``python -m tools.bench_review``.
REVIEW_BUDGET = replace(search.BUDGETS["master"], playouts=3600, min_deals=450, exact_tiles=16,
                        exact_deals=300, halving=False)
#: Share of the budget's deals spent on a value no choice depends on (a forced move's, the
#: other sides' in games of 3 or 4 sides).
OUTLOOK_SHARE = 4

Progress = Callable[[int, int], None]


def review_budget(deals: int | None = None) -> search.Budget:
    """The review's budget, or a cheaper one with ``deals`` deals per candidate (tests, CLI)."""
    if deals is None:
        return REVIEW_BUDGET
    return replace(REVIEW_BUDGET, playouts=0, min_deals=deals,
                   exact_deals=min(REVIEW_BUDGET.exact_deals, deals))


# -- replaying a record ----------------------------------------------------------------------

def _seats(record: dict, seats: list[int] | None) -> list[int]:
    players = make_rules(record["rules"], record.get("players")).players
    if seats is None:
        return list(range(players))
    for s in seats:
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < players:
            raise RuleError("bad_record", f"{s!r} is not a seat of this table")
    return sorted(set(seats))


def engine_move(rnd: Round, raw: dict) -> tuple[int, int]:
    seat = raw["seat"]
    if raw.get("pass"):
        return rnd.check_pass(seat)
    tile, first, second = parse_tile(raw["play"])
    end = raw.get("end")
    return rnd.check_play(seat, tile, None if end is None else END_NAMES.index(end),
                          flipped=first < second)


def _positions(record: dict, seats: list[int]):
    """(round index, move index, raw move, the mover's view, engine move) for every move of
    ``seats``, the record being already checked by the harness."""
    match = Match(make_rules(record["rules"], record.get("players")))
    for k, raw_round in enumerate(record.get("rounds", [])):
        hands = [[parse_tile(t)[0] for t in hand] for hand in raw_round["hands"]]
        bones = [parse_tile(t)[0] for t in raw_round.get("boneyard", [])]
        rnd = match.start_round(hands, bones, raw_round.get("opener"))
        for i, raw in enumerate(raw_round.get("moves", [])):
            move = engine_move(rnd, raw)
            if raw["seat"] in seats:
                yield k, i, raw, seat_view(match, raw["seat"]), move
            match.play(*move, written=raw)


def count_moves(record: dict, *, seats: list[int] | None = None) -> int:
    """How many moves :func:`review_record` judges (0 for a record it refuses)."""
    try:
        harness.load(record)
        chosen = _seats(record, seats)
    except RuleError:
        return 0
    return sum(1 for raw_round in record.get("rounds", [])
               for raw in raw_round.get("moves", []) if raw["seat"] in chosen)


def views_at(record: dict, wanted: set[tuple[int, int]]) -> dict[tuple[int, int], dict]:
    """The mover's view just before each ``(round index, move index)`` of ``wanted``: what that
    seat saw then, and nothing else (the exercises made of a review start from it)."""
    harness.load(record)
    out: dict[tuple[int, int], dict] = {}
    for k, i, _raw, view, _move in _positions(record, _seats(record, None)):
        if (k, i) in wanted:
            out[(k, i)] = view
    return out


def same_position(view: dict, a: int, b: int) -> bool:
    """Whether legal moves ``a`` and ``b`` of ``view`` (indices into ``view["legal"]``) lead to
    the same position, as the review merges them into one candidate."""
    pub = Public(view)
    return position_key(pub, pub.legal[a]) == position_key(pub, pub.legal[b])


# -- judging one move ------------------------------------------------------------------------

def position_key(pub: Public, move: tuple[int, int]) -> tuple[int, int]:
    """Moves with the same key lead to the same position (as ``search.distinct`` merges them):
    the first tile either way round; outside all-fives, a tile on an end showing the same
    number."""
    t, e = move
    if t < 0:
        return move
    if e < 0:
        return (t, OPEN)
    if not pub.rules.fives:
        return (t, pub.base.ends[e])
    return move


def _candidate(pub: Public, est: search.Estimate, move: tuple[int, int]) -> int:
    t, e = move
    if e == OPEN_FLIPPED:
        move = (t, OPEN)
    for k, c in enumerate(est.candidates):
        if pub.legal[c] == move:
            return k
    want = position_key(pub, move)
    for k, c in enumerate(est.candidates):
        if position_key(pub, pub.legal[c]) == want:
            return k
    raise AssertionError(f"the played move {move} is none of the search's candidates")


def _outlook(pub: Public, rng: random.Random, budget: search.Budget,
             move: tuple[int, int]) -> list[float]:
    """The value of ``move`` for every side, sampled as :func:`search.estimate` samples (fewer
    deals: no choice depends on it)."""
    sides = pub.rules.sides
    side = pub.side(pub.seat)
    fives_before = list(pub.base.fives)
    # The same endings as the search solves exactly, and only those (a large one never ends).
    exact = sides == 2 and search.exact_applies(pub, budget)
    deals = max(4, (budget.exact_deals if exact else budget.min_deals) // OUTLOOK_SHARE)
    play_out = search.rollout_blocking if budget.blocking else search.rollout
    totals = [0.0] * sides
    for _ in range(deals):
        hands, bones = pub.sample(rng)
        w = pub.world(hands, bones)
        fast = Solver(w) if exact and budget.fast_solve and applies(w) else None
        w.play(*move)
        if exact:
            v = fast.value(w, side) if fast is not None else \
                search.solve(w, side, fives_before, float("-inf"), float("inf"))
            totals[side] += v
            totals[1 - side] -= v
        else:
            play_out(w, random.Random(rng.getrandbits(32)))
            for s in range(sides):
                totals[s] += search.side_value(w, s, fives_before)
    return [v / deals for v in totals]


def _paired(best: list[float], played: list[float]) -> tuple[float, float]:
    """Mean and standard error of best - played over their common deals."""
    n = min(len(best), len(played))
    if n == 0:
        return 0.0, 0.0
    diffs = [best[i] - played[i] for i in range(n)]
    mean = sum(diffs) / n
    if n < 2:
        return mean, 0.0
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    return mean, math.sqrt(var / n)


def _sure(loss: float, stderr: float) -> float:
    if loss <= 0:
        return 0.0
    if stderr <= 0:
        return 1.0
    return 0.5 * (1 + math.erf(loss / stderr / math.sqrt(2)))


def _mark(loss: float, sure: float) -> str | None:
    return accuracy.classify(loss, sure)


def _written(raw: dict) -> dict:
    return {k: raw[k] for k in ("play", "end", "pass") if k in raw}


def judge(view: dict, raw: dict, move: tuple[int, int], rng: random.Random,
          budget: search.Budget) -> dict:
    """The verdict on one move (``raw`` as the record wrote it, ``move`` as the engine took it)
    from the mover's ``view`` just before it."""
    pub = Public(view)
    side = pub.side(pub.seat)
    sides = pub.rules.sides
    played = _written(raw)
    entry = {"index": None, "seat": pub.seat, "played": played, "best": dict(played),
             "forced": True, "loss": 0.0, "stderr": 0.0, "sure": 0.0, "mark": None,
             "expected": 0.0, "expected_for": [0.0] * sides, "reasons": []}
    est = search.estimate(pub, rng, budget)
    if len(est.candidates) == 1:
        outlook = _outlook(pub, rng, budget, move)
        entry["expected"] = round(outlook[side], 1)
        entry["expected_for"] = [round(v, 1) for v in outlook]
        return entry
    k_played = _candidate(pub, est, move)
    k_best = est.chosen
    expected = est.mean(k_played)
    if sides == 2:
        outlook = [0.0, 0.0]
        outlook[side], outlook[1 - side] = expected, -expected
    else:
        outlook = _outlook(pub, rng, budget, move)
        outlook[side] = expected
    entry["forced"] = False
    entry["expected"] = round(expected, 1)
    entry["expected_for"] = [round(v, 1) for v in outlook]
    if k_best == k_played:
        return entry
    best_move = pub.legal[est.candidates[k_best]]
    entry["best"] = dict(view["legal"][est.candidates[k_best]])
    loss, stderr = _paired(est.values[k_best], est.values[k_played])
    loss = max(0.0, loss)
    sure = _sure(loss, stderr)
    entry["loss"] = round(loss, 1)
    entry["stderr"] = round(stderr, 2)
    entry["sure"] = round(sure, 2)
    entry["mark"] = _mark(entry["loss"], sure)
    if entry["mark"] is not None:
        entry["reasons"] = reasons(pub, move, best_move)
    return entry


# -- reasons ---------------------------------------------------------------------------------

def _after(pub: Public, move: tuple[int, int]) -> Round:
    w = pub.base.copy()
    w.play(*move)
    return w


def _void_showing(pub: Public, w: Round, seat: int) -> list[int]:
    """Numbers showing after ``w``'s move that ``seat`` has passed on."""
    if w.result is not None:
        return []
    void = pub.void[seat]
    return sorted({w.ends[e] for e in range(w.n_ends) if void >> w.ends[e] & 1}, reverse=True)


def _stuck(pub: Public, w: Round, seat: int) -> bool:
    """Whether ``seat`` surely cannot play after ``w``'s move: every tile it might hold (not in
    the mover's hand, not on the table, not of a number it passed on) fits no open end. With a
    boneyard to draw from, any unseen tile might come to it."""
    if w.result is not None:
        return False
    ends = {w.ends[e] for e in range(w.n_ends)}
    void = 0 if pub.rules.draws and pub.boneyard_count else pub.void[seat]
    for t in pub.unknown:
        if (HI[t] in ends or LO[t] in ends) and not (void >> HI[t] & 1 or void >> LO[t] & 1):
            return False
    return True


def reasons(pub: Public, played: tuple[int, int], best: tuple[int, int]) -> list[dict]:
    """Why the bot's move is better, as machine codes (tests in docs/review.md)."""
    out: list[dict] = []
    seat = pub.seat
    tp, tb = played[0], best[0]
    wp, wb = _after(pub, played), _after(pub, best)
    if pub.rules.fives:
        gain = (wb.fives[seat] - pub.base.fives[seat]) - (wp.fives[seat] - pub.base.fives[seat])
        if gain >= FIVES_POINTS:
            out.append({"code": "fives_missed", "points": gain})
    nxt = (seat + 1) % pub.n
    if pub.side(nxt) != pub.side(seat):
        if _stuck(pub, wb, nxt) and not _stuck(pub, wp, nxt):
            out.append({"code": "lock_missed", "seat": nxt,
                        "numbers": sorted({wb.ends[e] for e in range(wb.n_ends)}, reverse=True)})
        else:
            told_b, told_p = _void_showing(pub, wb, nxt), _void_showing(pub, wp, nxt)
            if told_b and not told_p:
                out.append({"code": "pass_told", "seat": nxt, "numbers": told_b})
    if tp == tb:
        out.append({"code": "wrong_end", "tile": NAMES[tb], "end": END_NAMES[best[1]]})
    elif IS_DOUBLE[tb] and not IS_DOUBLE[tp]:
        out.append({"code": "double_held", "tile": NAMES[tb]})
    elif PIPS[tb] - PIPS[tp] >= HEAVY_PIPS:
        out.append({"code": "heavy_kept", "tile": NAMES[tb], "pips": PIPS[tb] - PIPS[tp]})
    return out


# -- the whole record ------------------------------------------------------------------------

def _summary(entries: list[dict]) -> dict:
    counts: dict[str, int] = {}
    for e in entries:
        for r in e["reasons"]:
            counts[r["code"]] = counts.get(r["code"], 0) + 1
    return {
        "loss": round(sum(e["loss"] for e in entries), 1),
        "judged": sum(1 for e in entries if not e["forced"]),
        "inaccuracies": sum(1 for e in entries if e["mark"] == "inaccuracy"),
        "mistakes": sum(1 for e in entries if e["mark"] == "mistake"),
        "blunders": sum(1 for e in entries if e["mark"] == "blunder"),
        "reasons": [{"code": c, "count": n}
                    for c, n in sorted(counts.items(), key=lambda item: -item[1])],
    }


def move_rng(seed: int, round_index: int, move_index: int) -> random.Random:
    """The one generator a move is judged with, whatever else is reviewed."""
    return random.Random(f"review:{seed}:{round_index}:{move_index}")


def review_record(record: dict, *, seats: list[int] | None = None, seed: int = 0,
                  progress: Progress | None = None,
                  budget: search.Budget | None = None) -> dict:
    """The review of ``record`` for ``seats`` (None: every seat); see the module's docstring.

    ``progress(done, total)`` is called after each judged move; ``budget`` replaces
    :data:`REVIEW_BUDGET` (tests use a small one).
    """
    budget = budget or REVIEW_BUDGET
    try:
        harness.load(record)
        chosen = _seats(record, seats)
    except RuleError as err:
        return {"ok": False, "error": err.as_dict()}
    total = count_moves(record, seats=chosen)
    rounds = [{"number": k + 1, "moves": []} for k in range(len(record.get("rounds", [])))]
    done = 0
    for k, i, raw, view, move in _positions(record, chosen):
        entry = judge(view, raw, move, move_rng(seed, k, i), budget)
        entry["index"] = i
        rounds[k]["moves"].append(entry)
        done += 1
        if progress is not None:
            progress(done, total)
    for rnd in rounds:
        rnd["summary"] = {str(s): _summary([e for e in rnd["moves"] if e["seat"] == s])
                          for s in chosen}
    return {"ok": True, "version": VERSION, "seed": seed, "seats": chosen,
            "thresholds": {**THRESHOLDS, "sure": SURE}, "rounds": rounds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m apps.bots.review",
        description="Review a finished match move by move with the master bot's evaluation.")
    parser.add_argument("record", help="the record's JSON file, or - for standard input")
    parser.add_argument("--seat", type=int, action="append", metavar="N",
                        help="a seat to review (repeatable; every seat when left out)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--deals", type=int, default=None, metavar="D",
                        help="deals per candidate instead of the review budget's (quicker, "
                             "rougher)")
    args = parser.parse_args(argv)
    try:
        if args.record == "-":
            record = json.load(sys.stdin)
        else:
            with open(args.record, encoding="utf-8") as fh:
                record = json.load(fh)
    except (OSError, ValueError) as exc:
        out = {"ok": False, "error": {"code": "bad_record", "round": None, "move": None,
                                      "message": f"the record cannot be read: {exc}"}}
    else:
        out = review_record(record, seats=args.seat, seed=args.seed,
                            budget=review_budget(args.deals))
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")
    if not out["ok"]:
        sys.stderr.write(f"review refused: {out['error']['message']}\n")
    return harness.exit_code(out)


if __name__ == "__main__":
    sys.exit(main())
