"""The harness contract: refusals, exit codes, views, options, and an engine free of Django."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from apps.rules.harness import replay, view

from .records import BLOCK_PLAY, BLOCK_TIE_HANDS, deal, moves, record

ROOT = Path(__file__).resolve().parents[2]

# The view example of harness.md, rebuilt: seat 2 after 6-6 and 6-5 on B.
SPEC_HANDS = [
    "6-6 6-3 6-2 6-1 6-0 0-0 1-1",
    "6-5 5-5 5-4 5-3 5-2 5-0 2-2",
    "6-4 3-3 5-1 2-0 4-4 1-0 3-2",
    "4-3 4-2 4-1 4-0 3-1 3-0 2-1",
]


def code_of(rec: dict) -> str:
    out = replay(rec)
    assert out["ok"] is False, out
    assert set(out["error"]) == {"code", "round", "move", "message"}
    return out["error"]["code"]


def test_the_spec_view_example_is_reproduced_exactly():
    rec = record("partners-66", [deal(SPEC_HANDS, play="0:6-6 1:6-5B")], target=50)
    rec["players"] = 4
    assert view(rec, 2) == {
        "seat": 2,
        "players": 4,
        "rules": {"preset": "partners-66", "target": 50, "hand_size": 7, "turn_seconds": None},
        "round": 0,
        "hand": ["6-4", "3-3", "5-1", "2-0", "4-4", "1-0", "3-2"],
        "turn": 2,
        "ends": {"A": 6, "B": 5},
        "moves": [{"seat": 0, "play": "6-6"}, {"seat": 1, "play": "6-5", "end": "B"}],
        "draws": [],
        "hand_counts": [6, 6, 7, 7],
        "boneyard_count": 0,
        "passed_on": {},
        "fives": [0, 0, 0, 0],
        "scores": [0, 0],
        "legal": [{"play": "6-4", "end": "A"}, {"play": "5-1", "end": "B"}],
        "revealed": None,
    }


def test_a_view_holds_no_other_hand_and_reveals_all_at_the_end():
    rec = record("partners", [deal(BLOCK_TIE_HANDS, play="0:6-6 1:6-2A")])
    seen = view(rec, 3)
    text = json.dumps(seen)
    for seat, hand in enumerate(BLOCK_TIE_HANDS):
        for tile in hand.split():
            if seat != 3 and tile not in ("6-6", "6-2"):
                assert f'"{tile}"' not in text, tile
    assert seen["legal"] == [] and seen["revealed"] is None
    assert seen["rules"] == {"preset": "partners", "target": 100, "hand_size": 7,
                             "turn_seconds": 45}
    done = view(record("partners", [deal(BLOCK_TIE_HANDS, play=BLOCK_PLAY)]), 3)
    assert done["turn"] is None and done["legal"] == []
    assert done["revealed"][0] == ["5-5", "4-4", "5-3", "4-3"]
    assert done["hand"] == ["3-1", "4-1", "5-1", "4-2", "5-2"]


def test_moves_in_a_view_are_the_record_as_written():
    rec = record("partners", [deal(BLOCK_TIE_HANDS, play="0:6-1 1:2-6")])
    assert view(rec, 0)["moves"][1] == {"seat": 1, "play": "2-6"}
    # The first tile written low-first turns the line: A takes the first half.
    rec = record("partners", [deal(BLOCK_TIE_HANDS, play="0:1-6")])
    assert replay(rec)["current"]["ends"] == {"A": 1, "B": 6}


class TestRefusals:
    base = deal(BLOCK_TIE_HANDS)

    def with_moves(self, text: str, preset: str = "partners") -> dict:
        return record(preset, [dict(self.base, moves=moves(text))])

    def test_not_your_turn(self):
        assert code_of(self.with_moves("1:6-2")) == "not_your_turn"

    def test_illegal_move_tile_not_in_hand(self):
        out = replay(self.with_moves("0:6-6 1:6-4A"))
        assert out["error"]["code"] == "illegal_move"
        assert "6-4" in out["error"]["message"]
        assert (out["error"]["round"], out["error"]["move"]) == (0, 1)

    def test_illegal_move_fits_neither_end(self):
        out = replay(self.with_moves("0:6-6 1:1-0"))
        assert out["error"]["code"] == "illegal_move"
        assert "1-0 fits neither end (6, 6)" in out["error"]["message"]

    def test_illegal_move_wrong_end(self):
        assert code_of(self.with_moves("0:6-1 1:6-2B")) == "illegal_move"
        assert code_of(self.with_moves("0:6-1 1:6-2C")) == "illegal_move"

    def test_end_required(self):
        out = replay(self.with_moves("0:6-6 1:6-2"))
        assert out["error"]["code"] == "end_required"
        assert "A and B" in out["error"]["message"]

    def test_must_play(self):
        assert code_of(self.with_moves("0:6-6 1:p")) == "must_play"
        assert code_of(self.with_moves("0:p")) == "must_play"

    def test_must_open_with(self):
        assert code_of(self.with_moves("0:6-1", "partners-66")) == "must_open_with"

    def test_round_over(self):
        assert code_of(self.with_moves(BLOCK_PLAY + " 2:p")) == "round_over"

    @pytest.mark.parametrize("mutate", [
        lambda r: r.update(colour="red"),
        lambda r: r["rules"].update(speed=2),
        lambda r: r["rounds"][0].update(dealer=1),
        lambda r: r["rounds"][0]["moves"].append({"seat": 0, "play": "6-6", "note": "x"}),
        lambda r: r["rounds"][0]["moves"].append({"seat": 0, "play": "6-6", "pass": True}),
        lambda r: r["rounds"][0]["moves"].append({"seat": 7, "play": "6-6"}),
        lambda r: r["rounds"][0]["moves"].append({"seat": 0, "play": "6-7"}),
        lambda r: r["rounds"][0]["moves"].append({"seat": 0, "play": "6-6", "end": "E"}),
        lambda r: r["rounds"][0]["hands"][0].__setitem__(0, "6-1"),
        lambda r: r["rounds"][0]["hands"][0].pop(),
        lambda r: r["rounds"][0].update(boneyard=["6-6"]),
        lambda r: r["rules"].update(preset="mexican-train"),
        lambda r: r["rules"].update(best_of=3),
        lambda r: r["rules"].update(target=55),
        lambda r: r["rules"].update(hand_size=5),
        lambda r: r.update(players=3),
        lambda r: r.update(rounds={}),
        lambda r: r.pop("rules"),
    ])
    def test_bad_record(self, mutate):
        rec = record("partners", [dict(self.base, moves=[])])
        rec["rounds"][0]["hands"] = [list(h) for h in rec["rounds"][0]["hands"]]
        mutate(rec)
        assert code_of(rec) == "bad_record"

    def test_moves_may_say_when_and_by_whom_and_views_repeat_it(self):
        rec = record("partners", [dict(self.base, moves=[])])
        rec["rounds"][0]["moves"] = [
            {"seat": 0, "play": "6-6", "at": "2026-12-01T18:04:05.120+00:00", "by": "player"},
            {"seat": 1, "play": "6-2", "end": "A", "at": "2026-12-01T15:04:09-03:00",
             "by": "table"}]
        assert replay(rec)["ok"] is True
        assert view(rec, 2)["moves"] == rec["rounds"][0]["moves"]

    @pytest.mark.parametrize("extra", [
        {"by": "robot"}, {"by": None}, {"at": "yesterday"}, {"at": 1795967595},
        {"at": "2026-12-01T18:04:05"},  # no offset: a time nobody can place
    ])
    def test_a_bad_when_or_by_whom_is_a_bad_record(self, extra):
        rec = record("partners", [dict(self.base, moves=[])])
        rec["rounds"][0]["moves"] = [{"seat": 0, "play": "6-6", **extra}]
        assert code_of(rec) == "bad_record"

    def test_an_unfinished_round_cannot_be_followed(self):
        rec = record("partners", [deal(BLOCK_TIE_HANDS, play="0:6-6"), deal(BLOCK_TIE_HANDS)])
        assert code_of(rec) == "bad_record"

    def test_the_refused_move_and_later_ones_are_not_applied(self):
        rec = self.with_moves("0:6-6 1:1-0 1:6-2A")
        assert replay(rec)["error"]["move"] == 1


@pytest.mark.parametrize(("options", "players"), [
    ({"preset": "tranca", "hand_size": 6}, 2),
    ({"preset": "tranca", "target": 75}, 2),
    ({"preset": "pairs-series", "best_of": 2}, None),
    ({"preset": "pairs-series", "tie": "coin"}, None),
    ({"preset": "partners", "target": 550}, None),
    ({"preset": "partners", "tie": "replay"}, None),
    ({"preset": "draw", "turn_seconds": 0}, 2),
    ({"preset": "draw", "turn_seconds": "soon"}, 2),
    ({"preset": "draw"}, 5),
    ({"preset": "draw"}, None),
    ({"preset": "block", "hand_size": 7}, 4),
])
def test_inconsistent_options_are_refused_with_a_message(options, players):
    rec = {"rules": options, "rounds": []}
    if players is not None:
        rec["players"] = players
    out = replay(rec)
    assert out["ok"] is False and out["error"]["code"] == "bad_record"
    assert len(out["error"]["message"]) > 10


def test_options_and_defaults_in_force():
    out = view(record("tranca", [deal(["6-6 1-0 4-0 3-1 2-1", "6-2 4-4 2-0 5-5 0-0"])],
                      players=2, hand_size=5, target=150, turn_seconds=20), 1)
    assert out["rules"] == {"preset": "tranca", "target": 150, "hand_size": 5,
                            "turn_seconds": 20}
    out = view(record("pairs-series", [deal(BLOCK_TIE_HANDS, opener=3)]), 3)
    assert out["rules"] == {"preset": "pairs-series", "target": 300, "hand_size": 7,
                            "turn_seconds": None, "best_of": 1, "tie": "closer_loses"}


def run_cli(*args: str, stdin: str | None = None) -> tuple[int, dict]:
    proc = subprocess.run([sys.executable, "-m", "apps.rules.harness", *args], cwd=ROOT,
                          input=stdin, capture_output=True, text=True, timeout=60)
    return proc.returncode, json.loads(proc.stdout)


@pytest.mark.slow
def test_cli_exit_codes_and_view(tmp_path):
    good = record("partners", [deal(BLOCK_TIE_HANDS, play=BLOCK_PLAY)])
    path = tmp_path / "good.json"
    path.write_text(json.dumps(good))
    code, out = run_cli(str(path))
    assert code == 0 and out == replay(good)
    code, out = run_cli("-", "--view", "1", stdin=json.dumps(good))
    assert code == 0 and out == view(good, 1)
    bad_move = record("partners", [deal(BLOCK_TIE_HANDS, play="1:6-2")])
    code, out = run_cli("-", stdin=json.dumps(bad_move))
    assert code == 1 and out["error"]["code"] == "not_your_turn"
    code, out = run_cli("-", stdin="{not json")
    assert code == 2 and out["error"]["code"] == "bad_record"
    code, out = run_cli(str(tmp_path / "missing.json"))
    assert code == 2


@pytest.mark.slow
def test_the_engine_imports_no_django():
    probe = ("import sys, apps.rules, apps.rules.harness, tools.bench_rules, apps.rules.view; "
             "print(sorted(m for m in sys.modules if m.split('.')[0] == 'django'))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "[]"
    importing = re.compile(r"^\s*(from|import)\s+django", re.MULTILINE)
    for source in (ROOT / "apps" / "rules").glob("*.py"):
        assert not importing.search(source.read_text()), source
