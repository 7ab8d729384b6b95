"""static/js/board.js in Chromium, against the rules engine: the open ends it works out for each
move (what a pass was a pass on) are the engine's, and the line it draws, snake or all-fives
cross, holds every tile once, inside the board, with no two things on top of each other, the
spinner's C arm above it and D below."""

from __future__ import annotations

import json
import random
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from apps.rules.engine import Match, deal
from apps.rules.presets import make_rules
from apps.rules.view import public_view

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                                 reason="needs /usr/bin/chromium")]

ROOT = Path(__file__).resolve().parent.parent.parent
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
STRINGS = {"numbers": ["blank", "one", "two", "three", "four", "five", "six"],
           "end_label": "end %(end)s: %(n)s", "play_at": "Play %(tile)s at end %(end)s",
           "line": "The line", "spinner_arm": "Spinner, end %(end)s"}


def rounds(preset: str, players: int, seeds: range) -> list[dict]:
    """Random rounds: the final public view, and the engine's open ends before each move."""
    out = []
    for seed in seeds:
        rng = random.Random(seed)
        rules = make_rules({"preset": preset}, players)
        match = Match(rules)
        hands, boneyard, opener = deal(rules, rng)
        rnd = match.start_round(hands, boneyard,
                                opener if rules.first_opener == "random" else None)
        before = []
        views = []
        while rnd.result is None:
            before.append(dict(rnd.open_ends()))
            views.append(public_view(match))
            match.play(*rng.choice(rnd.legal()))
        views.append(public_view(match))
        out.append({"preset": preset, "view": views[-1], "before": before,
                    "partial": views[len(views) // 2]})
    return out


@pytest.fixture(scope="module")
def page():
    playwright = pytest.importorskip("playwright.sync_api")
    handler = partial(SimpleHTTPRequestHandler, directory=str(ROOT))
    handler.log_message = lambda *args: None
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page()
        page.goto(f"http://127.0.0.1:{server.server_port}/static/css/site.css")
        page.set_content("<!DOCTYPE html><html><body><div id='box'></div></body></html>")
        yield page, f"http://127.0.0.1:{server.server_port}"
        browser.close()
    server.shutdown()


CASES = (rounds("all-fives", 2, range(0, 40)) + rounds("all-fives", 4, range(40, 70))
         + rounds("partners", 4, range(70, 90)) + rounds("draw", 3, range(90, 100)))

#: One function of [base URL, cases, strings] returning {problems, crosses}.
CHECK = (Path(__file__).resolve().parent / "board_check.js").read_text()



def test_board_matches_the_engine_and_lays_the_line_cleanly(page):
    pg, base = page
    result = pg.evaluate(CHECK, [base, json.loads(json.dumps(CASES)), STRINGS])
    assert not result["problems"], result["problems"]
    assert result["crosses"] > 20  # all-fives lines with a spinner are drawn as a cross


def test_a_spinner_cross_grows_four_ways(page):
    pg, base = page
    # 5-5 first; 5-3 on A and 5-2 on B open C and D; 5-1 on C, 5-6 on D.
    view = {"moves": [{"seat": 0, "play": "5-5"}, {"seat": 1, "play": "5-3", "end": "A"},
                      {"seat": 0, "play": "5-2", "end": "B"},
                      {"seat": 1, "play": "5-1", "end": "C"},
                      {"seat": 0, "play": "6-5", "end": "D"}],
            "ends": {"A": 3, "B": 2, "C": 1, "D": 6}}
    got = pg.evaluate("""async ([base, view, strings]) => {
      const board = await import(base + "/static/js/board.js");
      const drawn = board.lineSvg(view, {preset: "all-fives", strings, width: 400});
      document.getElementById("box").innerHTML = drawn.svg;
      const at = (ply) => document.querySelector(`[data-ply="${ply}"]`).getBBox();
      const s = at(0);
      const cx = (b) => b.x + b.width / 2;
      const cy = (b) => b.y + b.height / 2;
      return {spinnerUpright: s.height > s.width, left: cx(at(1)) < s.x,
        right: cx(at(2)) > s.x + s.width, up: cy(at(3)) < s.y, down: cy(at(4)) > s.y + s.height,
        upright: [at(3).height > at(3).width, at(4).height > at(4).width],
        markers: [...document.querySelectorAll(".end-marker text:first-of-type")]
          .map((t) => t.textContent).sort(),
        labels: document.querySelectorAll(".arm-label").length, arms: drawn.arms,
        ends: board.endsBefore(view, "all-fives", 5)};
    }""", [base, view, STRINGS])
    assert got["spinnerUpright"] and got["left"] and got["right"] and got["up"] and got["down"]
    assert got["upright"] == [True, True]  # C and D run up and down the board
    assert got["markers"] == ["A", "B", "C", "D"] and got["labels"] == 0
    assert got["arms"] == {"C": ["5-1"], "D": ["5-6"]}
    assert got["ends"] == {"A": 3, "B": 2, "C": 1, "D": 6}
