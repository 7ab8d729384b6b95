"""Replay a game record through the engine: ``python -m apps.rules.harness RECORD.json``.

The record format and the output are specified in ``shared/specs/harness.md``. Exit status: 0 for
a valid record, 1 when a move is refused, 2 when the record cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from datetime import datetime

from .engine import END_NAMES, Match, legal_dict
from .errors import RuleError
from .presets import make_rules
from .tiles import NAMES, parse_tile
from .view import draws_list, passed_on, seat_view, side_dict

RECORD_KEYS = {"rules", "players", "rounds"}
ROUND_KEYS = {"hands", "boneyard", "opener", "moves"}
MOVE_KEYS = {"seat", "play", "end", "pass", "at", "by"}
#: Who made a move (``by``): it describes the move and changes nothing in the rules.
MOVE_BY = ("player", "table", "bot")
MOVE_CODES = {"not_your_turn", "illegal_move", "end_required", "must_play", "must_open_with",
              "round_over"}


def _bad(message: str, rnd: int | None = None, move: int | None = None) -> RuleError:
    err = RuleError("bad_record", message)
    err.round, err.move = rnd, move
    return err


def _parse_deal(match: Match, raw: object, k: int):
    if not isinstance(raw, Mapping):
        raise _bad(f"round {k} must be an object with hands and moves", k)
    unknown = sorted(set(raw) - ROUND_KEYS)
    if unknown:
        raise _bad(f"round {k}: unknown key {unknown[0]!r}", k)
    n, size = match.rules.players, match.rules.hand_size
    hands_raw = raw.get("hands")
    if not isinstance(hands_raw, list) or len(hands_raw) != n:
        raise _bad(f"round {k}: hands must list {n} hands, one per seat", k)
    seen: set[int] = set()
    hands = []
    for seat, hand_raw in enumerate(hands_raw):
        if not isinstance(hand_raw, list) or len(hand_raw) != size:
            raise _bad(f"round {k}: seat {seat} must be dealt {size} tiles", k)
        hand = []
        for text in hand_raw:
            tile = _tile(text, k, None)[0]
            if tile in seen:
                raise _bad(f"round {k}: {NAMES[tile]} is dealt twice", k)
            seen.add(tile)
            hand.append(tile)
        hands.append(hand)
    bones_raw = raw.get("boneyard", [])
    if not isinstance(bones_raw, list):
        raise _bad(f"round {k}: boneyard must be a list of tiles", k)
    boneyard = []
    for text in bones_raw:
        tile = _tile(text, k, None)[0]
        if tile in seen:
            raise _bad(f"round {k}: {NAMES[tile]} appears twice", k)
        seen.add(tile)
        boneyard.append(tile)
    if len(seen) != 28:
        raise _bad(f"round {k}: hands and boneyard hold {len(seen)} tiles, not the 28 of the set",
                   k)
    moves = raw.get("moves", [])
    if not isinstance(moves, list):
        raise _bad(f"round {k}: moves must be a list", k)
    return hands, boneyard, raw.get("opener"), moves


def _tile(text: object, k: int, i: int | None) -> tuple[int, int, int]:
    try:
        return parse_tile(text)
    except RuleError as err:
        err.round, err.move = k, i
        raise


def _apply_move(match: Match, raw: object, k: int, i: int) -> None:
    if not isinstance(raw, Mapping):
        raise _bad(f"round {k}, move {i} must be an object", k, i)
    unknown = sorted(set(raw) - MOVE_KEYS)
    if unknown:
        raise _bad(f"round {k}, move {i}: unknown key {unknown[0]!r}", k, i)
    seat = raw.get("seat")
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < match.rules.players:
        raise _bad(f"round {k}, move {i}: {seat!r} is not a seat", k, i)
    _check_description(raw, k, i)
    is_pass = "pass" in raw
    if is_pass == ("play" in raw):
        raise _bad(f"round {k}, move {i}: a move is either a play or a pass", k, i)
    end_raw = raw.get("end")
    end = None
    if end_raw is not None:
        if end_raw not in END_NAMES:
            raise _bad(f"round {k}, move {i}: end {end_raw!r} is not A, B, C or D", k, i)
        end = END_NAMES.index(end_raw)
    rnd = match.rounds[-1]
    try:
        if is_pass:
            if raw["pass"] is not True or end_raw is not None:
                raise _bad(f"round {k}, move {i}: a pass is written {{\"pass\": true}}", k, i)
            tile, end_i = rnd.check_pass(seat)
        else:
            tile, first, second = _tile(raw["play"], k, i)
            tile, end_i = rnd.check_play(seat, tile, end, flipped=first < second)
    except RuleError as err:
        err.round, err.move = k, i
        if err.code in MOVE_CODES:
            err.message = f"round {k + 1}, move {i + 1}: {err.message}"
        raise
    match.play(tile, end_i, written=raw)


def _check_description(raw: Mapping, k: int, i: int) -> None:
    """``at`` is an ISO 8601 time with its offset; ``by`` one of :data:`MOVE_BY`."""
    if "by" in raw and raw["by"] not in MOVE_BY:
        raise _bad(f"round {k}, move {i}: by {raw['by']!r} is not player, table or bot", k, i)
    if "at" in raw:
        at = raw["at"]
        try:
            moment = datetime.fromisoformat(at) if isinstance(at, str) else None
        except ValueError:
            moment = None
        if moment is None or moment.utcoffset() is None:
            raise _bad(f"round {k}, move {i}: at {at!r} is not an ISO 8601 time with an offset",
                       k, i)


def load(record: object) -> Match:
    """Build the match a record describes, or raise the :class:`RuleError` that refuses it."""
    if not isinstance(record, Mapping):
        raise _bad("a record is a JSON object with rules and rounds")
    unknown = sorted(set(record) - RECORD_KEYS)
    if unknown:
        raise _bad(f"unknown key {unknown[0]!r} in the record")
    if "rules" not in record:
        raise _bad("the record has no rules")
    try:
        rules = make_rules(record["rules"], record.get("players"))
    except RuleError as err:
        raise _bad(err.message) from err
    match = Match(rules)
    rounds = record.get("rounds", [])
    if not isinstance(rounds, list):
        raise _bad("rounds must be a list")
    for k, raw in enumerate(rounds):
        if k and match.rounds[-1].result is None:
            raise _bad(f"round {k - 1} has not ended but round {k} follows it", k - 1)
        if match.over:
            raise _bad(f"the match was over before round {k}", k)
        hands, boneyard, opener, moves = _parse_deal(match, raw, k)
        try:
            match.start_round(hands, boneyard, opener)
        except RuleError as err:
            raise _bad(f"round {k}: {err.message}", k) from err
        for i, move in enumerate(moves):
            _apply_move(match, move, k, i)
    return match


def summary(match: Match) -> dict:
    r = match.rules
    rounds = []
    for rnd in match.rounds:
        res = rnd.result
        first = rnd.public_moves[0]["play"] if rnd.public_moves else None
        rounds.append({
            "opener": rnd.opener,
            "first_tile": first,
            "draws": draws_list(rnd),
            "fives": list(rnd.fives),
            "result": None if res is None else {
                "reason": res.reason,
                "winner": side_dict(r, res.winner),
                "tie": res.tie,
                "pips": list(res.pips),
                "points": res.points,
            },
        })
    cur = match.current
    current = None
    if cur is not None:
        current = {
            "turn": cur.turn,
            "ends": cur.open_ends(),
            "legal": [legal_dict(t, e) for t, e in cur.legal()],
            "hand_counts": cur.hand_counts(),
            "boneyard_count": cur.boneyard_count,
            "passed_on": passed_on(cur),
        }
    return {
        "ok": True,
        "rounds": rounds,
        "scores": match.scores(),
        "match": {
            "over": match.over,
            "winner": side_dict(r, match.winner),
            "next_opener": match.next_opener(),
            "games": list(match.games),
        },
        "current": current,
    }


def _refusal(err: RuleError) -> dict:
    return {"ok": False, "error": err.as_dict()}


def replay(record: dict) -> dict:
    """What ``python -m apps.rules.harness`` prints for ``record``."""
    try:
        return summary(load(record))
    except RuleError as err:
        return _refusal(err)


def view(record: dict, seat: int) -> dict:
    """What ``python -m apps.rules.harness --view SEAT`` prints for ``record``."""
    try:
        match = load(record)
        if not match.rounds:
            raise _bad("the record has no round to view")
        if isinstance(seat, bool) or not isinstance(seat, int) \
                or not 0 <= seat < match.rules.players:
            raise _bad(f"{seat!r} is not a seat of this table")
        return seat_view(match, seat)
    except RuleError as err:
        return _refusal(err)


def steps(record: dict) -> list[list[dict]]:
    """Every position of a record, for a replay viewer: per round, one entry as dealt and one
    after each move, each with every seat's hand (draws included, as the engine holds them),
    the open ends, the boneyard's size and the running scores. Raises the
    :class:`RuleError` that refuses the record, as :func:`load` does."""
    match = load({**record, "rounds": []})
    out = []
    for k, raw in enumerate(record.get("rounds", [])):
        if k and match.rounds[-1].result is None:
            raise _bad(f"round {k - 1} has not ended but round {k} follows it", k - 1)
        hands, boneyard, opener, moves = _parse_deal(match, raw, k)
        try:
            rnd = match.start_round(hands, boneyard, opener)
        except RuleError as err:
            raise _bad(f"round {k}: {err.message}", k) from err
        frames = [_position(match, rnd)]
        for i, move in enumerate(moves):
            _apply_move(match, move, k, i)
            frames.append(_position(match, rnd))
        out.append(frames)
    return out


def _position(match: Match, rnd) -> dict:
    return {"hands": [[NAMES[t] for t in hand] for hand in rnd.hands],
            "ends": rnd.open_ends(), "boneyard_count": rnd.boneyard_count,
            "scores": match.scores(), "games": list(match.games)}


def exit_code(out: dict) -> int:
    if out.get("ok", True):
        return 0
    return 2 if out["error"]["code"] == "bad_record" else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m apps.rules.harness",
                                     description="Replay a domino game record through the engine.")
    parser.add_argument("record", help="the record's JSON file, or - for standard input")
    parser.add_argument("--view", type=int, metavar="SEAT",
                        help="print that seat's view of the current position instead")
    args = parser.parse_args(argv)
    try:
        if args.record == "-":
            record = json.load(sys.stdin)
        else:
            with open(args.record, encoding="utf-8") as fh:
                record = json.load(fh)
    except (OSError, ValueError) as exc:
        out = _refusal(_bad(f"the record cannot be read: {exc}"))
    else:
        out = replay(record) if args.view is None else view(record, args.view)
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return exit_code(out)


if __name__ == "__main__":
    sys.exit(main())
