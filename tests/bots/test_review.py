"""The review of a match (apps/bots/review.py): blind to hidden tiles, marks a bad move, leaves
forced moves alone, deterministic, the same per seat as for all, a CLI like the harness's."""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from apps.bots import review
from apps.rules import harness
from apps.rules.tiles import parse_tile
from tools.bench_review import play_record

ROOT = Path(__file__).resolve().parents[2]
#: A small budget: the tests check the plumbing, not the strength of the evaluation.
SMALL = review.review_budget(16)

#: A partners round up to seat 0's move 21. Before it the ends show 1 (A) and 2 (B); seat 0
#: holds 2-1 and 0-0; seat 1, next to play, passed on move 18 with 1 showing at both ends.
#: 2-1 on the 2 end (B) leaves 1 at both ends again, so seat 1 must pass; the record plays it on
#: the 1 end (A), leaving 2 at both ends, which frees seat 1 and gives the round away.
LOCK_RECORD = {"rules": {"preset": "partners"}, "players": 4, "rounds": [{"hands": [
    ["6-4", "3-0", "3-3", "5-1", "2-1", "4-3", "0-0"],
    ["6-5", "2-0", "5-3", "4-2", "1-0", "2-2", "6-0"],
    ["4-4", "5-4", "6-2", "6-3", "5-2", "1-1", "4-0"],
    ["6-6", "6-1", "3-1", "5-5", "4-1", "3-2", "5-0"]], "moves": [
    {"seat": 3, "play": "6-6"}, {"seat": 0, "play": "6-4", "end": "A"},
    {"seat": 1, "play": "6-5", "end": "B"}, {"seat": 2, "play": "4-4", "end": "A"},
    {"seat": 3, "play": "5-5", "end": "B"}, {"seat": 0, "play": "4-3", "end": "A"},
    {"seat": 1, "play": "5-3", "end": "B"}, {"seat": 2, "play": "6-3", "end": "B"},
    {"seat": 3, "play": "6-1", "end": "B"}, {"seat": 0, "play": "3-3", "end": "A"},
    {"seat": 1, "play": "1-0", "end": "B"}, {"seat": 2, "play": "4-0", "end": "B"},
    {"seat": 3, "play": "4-1", "end": "B"}, {"seat": 0, "play": "3-0", "end": "A"},
    {"seat": 1, "play": "2-0", "end": "A"}, {"seat": 2, "play": "5-2", "end": "A"},
    {"seat": 3, "play": "3-1", "end": "B"}, {"seat": 0, "play": "5-1", "end": "A"},
    {"seat": 1, "pass": True}, {"seat": 2, "play": "1-1", "end": "A"},
    {"seat": 3, "play": "3-2", "end": "B"}, {"seat": 0, "play": "2-1", "end": "A"}]}]}


def _entries(result: dict, seat: int | None = None) -> list[dict]:
    return [e for r in result["rounds"] for e in r["moves"] if seat is None or e["seat"] == seat]


@pytest.fixture(scope="module")
def record() -> dict:
    """Two rounds of partners between medium and easy bots."""
    return play_record("partners", ["medium", "easy"], seed=3, rounds=2)


@pytest.fixture(scope="module")
def reviewed(record) -> dict:
    return review.review_record(record, seed=7, budget=SMALL)


def test_the_verdict_does_not_depend_on_hidden_tiles() -> None:
    """Other seats' unplayed tiles dealt differently, same public history and same hand for
    seat 0: every one of seat 0's verdicts is the same."""
    deal = LOCK_RECORD["rounds"][0]
    moves = deal["moves"]
    played = {s: [m["play"] for m in moves if m["seat"] == s and "play" in m] for s in range(4)}
    hidden = [t for s in (1, 2, 3) for t in deal["hands"][s] if t not in played[s]]
    rng = random.Random(0)
    for _ in range(200):
        rng.shuffle(hidden)
        hands = [list(deal["hands"][0])]
        pos = 0
        for s in (1, 2, 3):
            n = len(deal["hands"][s]) - len(played[s])
            hands.append(played[s] + hidden[pos:pos + n])
            pos += n
        other = {**LOCK_RECORD, "rounds": [{"hands": hands, "moves": moves}]}
        unchanged = all(set(hands[s]) == set(deal["hands"][s]) for s in (1, 2, 3))
        if not unchanged and harness.replay(other)["ok"]:
            break
    else:
        pytest.fail("no other legal deal found")
    first = review.review_record(LOCK_RECORD, seats=[0], budget=SMALL)
    second = review.review_record(other, seats=[0], budget=SMALL)
    assert _entries(first) == _entries(second)
    assert len(_entries(first)) == 6
    # The other seats' own verdicts do see their (different) hands.
    mover_hands = [review.review_record(r, seats=[1, 2, 3], budget=SMALL) for r in
                   (LOCK_RECORD, other)]
    assert _entries(mover_hands[0]) != _entries(mover_hands[1])


def test_a_move_that_gives_the_round_away_is_a_blunder() -> None:
    out = review.review_record(LOCK_RECORD, seats=[0], budget=SMALL)
    last = _entries(out)[-1]
    assert last["index"] == 21 and last["played"] == {"play": "2-1", "end": "A"}
    assert last["best"] == {"play": "2-1", "end": "B"}
    # The round is worth about 28 points: past the blunder's threshold (16).
    assert last["mark"] == "blunder"
    assert last["loss"] > review.THRESHOLDS["blunder"]
    assert last["sure"] > 0.99 and 0 < last["stderr"] < last["loss"] / 4
    codes = [r["code"] for r in last["reasons"]]
    assert codes == ["lock_missed", "wrong_end"]
    assert last["reasons"][0] == {"code": "lock_missed", "seat": 1, "numbers": [1]}
    assert out["rounds"][0]["summary"]["0"]["blunders"] >= 1
    # The same position with the good end played: no loss, no mark.
    good = copy.deepcopy(LOCK_RECORD)
    good["rounds"][0]["moves"][-1]["end"] = "B"
    fine = _entries(review.review_record(good, seats=[0], budget=SMALL))[-1]
    assert fine["best"] == fine["played"] == {"play": "2-1", "end": "B"}
    assert (fine["loss"], fine["mark"], fine["reasons"]) == (0.0, None, [])
    assert fine["expected"] > last["expected"] + review.THRESHOLDS["mistake"]


def _distinct_moves(record: dict, k: int, i: int, seat: int) -> int:
    """Distinct positions the mover could reach, from the harness's own view."""
    cut = copy.deepcopy(record)
    cut["rounds"] = cut["rounds"][:k + 1]
    cut["rounds"][k]["moves"] = cut["rounds"][k]["moves"][:i]
    view = harness.view(cut, seat)
    keys = set()
    for m in view["legal"]:
        if m.get("pass"):
            keys.add("pass")
        elif "end" not in m:
            keys.add(parse_tile(m["play"])[0])
        else:
            keys.add((parse_tile(m["play"])[0], view["ends"][m["end"]]))
    return len(keys)


def test_forced_moves_are_not_judged(record, reviewed) -> None:
    forced = judged = 0
    for k, rnd in enumerate(reviewed["rounds"]):
        for e in rnd["moves"]:
            one = _distinct_moves(record, k, e["index"], e["seat"]) == 1
            assert e["forced"] == one, e
            if e["played"].get("pass"):
                assert e["forced"]
            if e["forced"]:
                forced += 1
                assert (e["loss"], e["stderr"], e["sure"], e["mark"], e["reasons"]) \
                    == (0.0, 0.0, 0.0, None, [])
                assert e["best"] == e["played"]
            else:
                judged += 1
            assert len(e["expected_for"]) == 2
            assert e["expected_for"][e["seat"] % 2] == e["expected"]
    assert forced and judged
    assert sum(s["judged"] for r in reviewed["rounds"] for s in r["summary"].values()) == judged


def test_the_review_is_deterministic(record, reviewed) -> None:
    assert review.review_record(record, seed=7, budget=SMALL) == reviewed
    assert review.review_record(record, seed=8, budget=SMALL) != reviewed


def test_one_seat_is_judged_as_in_the_review_of_all(record, reviewed) -> None:
    for seat in (1, 2):
        alone = review.review_record(record, seats=[seat], seed=7, budget=SMALL)
        assert alone["seats"] == [seat]
        assert _entries(alone) == _entries(reviewed, seat)
        for a, b in zip(alone["rounds"], reviewed["rounds"], strict=True):
            assert a["summary"] == {str(seat): b["summary"][str(seat)]}


def test_count_moves_and_progress(record, reviewed) -> None:
    assert review.count_moves(record) == len(_entries(reviewed))
    assert review.count_moves(record) == sum(len(r["moves"]) for r in record["rounds"])
    calls: list[tuple[int, int]] = []
    out = review.review_record(record, seats=[3], budget=SMALL,
                               progress=lambda done, total: calls.append((done, total)))
    n = review.count_moves(record, seats=[3])
    assert n == len(_entries(out)) == len(_entries(reviewed, 3)) > 0
    assert calls == [(i + 1, n) for i in range(n)]


def test_a_game_of_three_sides_with_a_boneyard() -> None:
    rec = play_record("draw", ["medium", "easy", "medium"], seed=5, rounds=1, players=3,
                      target=None)
    out = review.review_record(rec, budget=SMALL)
    entries = _entries(out)
    assert len(entries) == review.count_moves(rec) > 0
    assert all(len(e["expected_for"]) == 3 for e in entries)
    assert all(e["expected_for"][e["seat"]] == e["expected"] for e in entries)
    json.dumps(out)


def test_refusals() -> None:
    bad = copy.deepcopy(LOCK_RECORD)
    bad["rounds"][0]["moves"][1] = {"seat": 0, "play": "5-1", "end": "A"}
    out = review.review_record(bad)
    assert out["ok"] is False and out["error"]["code"] == "illegal_move"
    assert review.count_moves(bad) == 0
    assert review.review_record(LOCK_RECORD, seats=[4])["error"]["code"] == "bad_record"


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "apps.bots.review", *args], cwd=ROOT,
                          input=stdin, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_cli_round_trip_and_exit_codes(tmp_path) -> None:
    path = tmp_path / "record.json"
    path.write_text(json.dumps(LOCK_RECORD))
    done = _cli(str(path), "--seat", "0", "--seat", "2", "--seed", "3", "--deals", "16")
    assert done.returncode == 0, done.stderr
    expected = review.review_record(LOCK_RECORD, seats=[0, 2], seed=3, budget=SMALL)
    assert json.loads(done.stdout) == expected
    piped = _cli("-", "--seat", "0", "--seed", "3", "--deals", "16",
                 stdin=json.dumps(LOCK_RECORD))
    assert piped.returncode == 0
    assert _entries(json.loads(piped.stdout)) == _entries(expected, 0)

    bad = copy.deepcopy(LOCK_RECORD)
    bad["rounds"][0]["moves"][1] = {"seat": 0, "play": "5-1", "end": "A"}
    path.write_text(json.dumps(bad))
    refused = _cli(str(path), "--deals", "16")
    assert refused.returncode == 1
    assert json.loads(refused.stdout)["error"]["code"] == "illegal_move"
    assert "5-1" in refused.stderr

    path.write_text("{not json")
    unreadable = _cli(str(path))
    assert unreadable.returncode == 2 and "cannot be read" in unreadable.stderr
    assert _cli(str(tmp_path / "missing.json")).returncode == 2
    path.write_text(json.dumps(LOCK_RECORD))
    no_seat = _cli(str(path), "--seat", "9")
    assert no_seat.returncode == 2 and "9 is not a seat" in no_seat.stderr
