"""The match review in a real browser, against the site served by the run command (Daphne, the
Celery worker that computes the review on its ``bots`` queue, and beat).

- A guest (Spanish, a phone) plays a practice match against bots; on its replay page they ask
  for the review of their moves, watch the bar fill, and every move of the match gets its mark.
- ana (English, desktop) has a finished partners match with three friends: she asks for the
  review, the bar fills (its values only grow, and it is seen part-way), then every move of
  every round has its verdict in the replay's move list (ana's own marked as hers), the chart is
  drawn for her side, stepping the replay says each move's verdict, and a costly move's button
  moves the replay to it. The marks the page shows for ana's seat are the ones
  ``python -m apps.bots.review RECORD.json --seat 0`` prints for the record the page downloads.
  Reloaded, the page shows the stored review at once. Asking for a second match's review is
  refused past the hourly limit (one, here) with its message, and nothing is made.
- axe finds no serious violation, no page logs a console error or breaks the CSP.

Screenshots (390x844 and 1280x800): var/screenshots/review-en-*.png, review-es-guest-*.png.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .matches import shell
from .test_replay import LISTEN
from .test_table_page import ARGS, DESKTOP, PHONE, axe_check, shoot, wait_until, watch_console

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                                 reason="needs /usr/bin/chromium")]

ROOT = Path(__file__).resolve().parent.parent.parent
#: Deals per candidate move: enough for the bar to take a few seconds, few enough for a test.
DEALS = 600

SETUP = """
import json, random
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from apps.accounts.services import start_guest
from apps.rules.engine import legal_dict
from apps.tables import game, services
from apps.tables.models import Table

def finish(table, seed):
    rng = random.Random(seed)
    for _ in range(3000):
        table = Table.objects.get(pk=table.pk)
        engine = game.restore(table.current_match)
        rnd = engine.current
        if rnd is None:
            if engine.over:
                return
            services.next_round(user=table.host, table_id=table.pk)
            continue
        seat = table.seats.get(index=rnd.turn)
        if seat.is_bot or seat.user is None:
            services.act_on_deadline(table_id=table.pk, now=timezone.now() + timedelta(minutes=5))
            continue
        move = legal_dict(*rng.choice(rnd.legal()))
        services.play_move(user=seat.user, table_id=table.pk, round_number=len(engine.rounds) - 1,
                           ply=len(rnd.history), tile=move.get("play"), end=move.get("end"),
                           is_pass=bool(move.get("pass")))

U = get_user_model()
people = {n: U.objects.create_user(username=n, password="pw-" + n * 2)
          for n in ("ana", "bea", "caio", "dani")}
for u in people.values():
    u.profile.language = "en"
    u.profile.save()
codes = {}
for name, preset, players, target, seed in (("partners", "partners", 4, 50, 1),
                                            ("second", "draw", 2, 10, 2)):
    table = services.create_table(host=people["ana"], preset=preset, players=players,
                                  public=False, options={"target": target, "turn_seconds": None})
    for n in ("bea", "caio", "dani")[:players - 1]:
        services.join_table(user=people[n], table_id=table.pk, code=table.code)
    services.start_match(user=people["ana"], table_id=table.pk)
    finish(table, seed)
    codes[name] = table.code
guest = start_guest(language="es")
practice = services.open_practice(user=guest, preset="partners", bot_level="easy")
finish(practice, 3)
codes["practice"] = practice.code
sessions = {}
for name, user in (("ana", people["ana"]), ("guest", guest)):
    c = Client()
    c.force_login(user)
    sessions[name] = c.cookies["sessionid"].value
print(json.dumps({"sessions": sessions, "codes": codes}))
"""


def open_replay(browser, base: str, session: str, viewport: dict, locale: str, code: str,
                who: str, errors: list[str]):
    context = browser.new_context(viewport=viewport, locale=locale)
    context.add_cookies([{"name": "sessionid", "value": session, "url": base}])
    context.add_init_script(LISTEN)
    page = context.new_page()
    watch_console(page, who, errors)
    page.goto(f"{base}/t/{code}/matches/1/replay/")
    page.wait_for_selector("#replay-where[data-round]")
    page.wait_for_selector("#review")
    return context, page


def bar(page) -> tuple[float, float, str]:
    return tuple(page.evaluate("""(() => { const b = document.getElementById('review-bar');
        return [b.value, b.max, document.getElementById('review').dataset.state || '']; })()"""))


def ask_and_watch(page, timeout: float = 240) -> list[tuple[float, float, str]]:
    """Press the button; the bar's values until the review is done."""
    page.click("#review-ask")
    seen = []
    deadline = time.monotonic() + timeout
    while True:
        value = bar(page)
        if not seen or value != seen[-1]:
            seen.append(value)
        if value[2] == "done":
            return seen
        assert value[2] != "failed", seen
        assert time.monotonic() < deadline, f"the review took over {timeout} s: {seen}"
        time.sleep(0.1)


def verdicts_through(page, record: dict, seat_of_reader: int) -> dict[tuple[int, int], str]:
    """Step to the end of every round (partners): every move of the list has its verdict, the
    reader's marked as theirs, the chart a point for each move of the reader's side; returns
    each move's verdict (``data-verdict``) by (round, index)."""
    page.keyboard.press("Home")
    found = {}
    for k, rnd in enumerate(record["rounds"]):
        page.evaluate(f"""document.dispatchEvent(new CustomEvent('replay:go',
            {{detail: {{round: {k}, ply: {len(rnd["moves"])}}}}}))""")
        items = page.eval_on_selector_all(
            "#replay-moves li",
            "ns => ns.map(n => [n.dataset.verdict || '', n.classList.contains('mine'),"
            " !!n.querySelector('.verdict .visually-hidden')])")
        assert len(items) == len(rnd["moves"]), k
        for i, (verdict, mine, spoken) in enumerate(items):
            assert verdict in ("agrees", "close", "forced", "inaccuracy", "mistake",
                               "blunder"), (k, i)
            assert spoken, (k, i)  # said in words for a screen reader, not only a sign
            assert mine == (rnd["moves"][i]["seat"] == seat_of_reader), (k, i)
            found[(k, i)] = verdict
        # The chart: a point for each move of the reader's side (partners: seats 0 and 2).
        ours = [i for i, m in enumerate(rnd["moves"]) if m["seat"] % 2 == seat_of_reader % 2]
        assert page.locator("#review-chart svg polyline.expected").count() == 2
        assert sorted(int(i) for i in page.eval_on_selector_all(
            "#review-chart circle[data-index]", "ns => ns.map(n => n.dataset.index)")) == ours
        assert page.locator("#review-summary li").count() >= 1
    return found


def test_a_player_reviews_their_match_and_the_page_agrees_with_the_command(run_site, tmp_path,
                                                                          monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    site = run_site(env={"REVIEW_DEALS": str(DEALS), "REVIEWS_PER_HOUR": "1"})
    base = site.base_url
    made = shell(site, SETUP)
    errors: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            # The guest's practice match, first: a practice table is deleted two minutes after
            # it was opened when no page holds it.
            context, page = open_replay(browser, base, made["sessions"]["guest"], PHONE, "es",
                                        made["codes"]["practice"], "guest", errors)
            assert page.locator("#review-ask").inner_text() == "Analizar mis jugadas"
            seen = ask_and_watch(page)
            assert seen[-1][0] == seen[-1][1] > 0
            record = context.request.get(
                f"{base}/t/{made['codes']['practice']}/record.json?match=1").json()
            verdicts_through(page, record, seat_of_reader=0)
            assert "jugadas analizadas" in page.locator("#review-progress-text").inner_text()
            page.keyboard.press("Home")
            page.keyboard.press("ArrowRight")
            assert page.locator("#review-verdict").inner_text().startswith("Jugada 1,")
            axe_check(page, "review (guest, es)")
            shoot(page, "review-es-guest")
            assert page.evaluate("window.__csp") == []
            context.close()

            # ana's partners match.
            code = made["codes"]["partners"]
            context, page = open_replay(browser, base, made["sessions"]["ana"], DESKTOP, "en",
                                        code, "ana", errors)
            assert page.locator("#review-body").is_hidden()
            axe_check(page, "replay with the review button")
            seen = ask_and_watch(page)
            values = [v for v, _m, status in seen if status in ("queued", "running", "done")]
            assert values == sorted(values), seen  # the bar only fills
            total = seen[-1][1]
            assert seen[-1][0] == total > 0
            assert any(0 < v < total for v, _m, _s in seen), seen  # seen part-way
            assert page.locator("#review-body").is_visible()
            record = context.request.get(f"{base}/t/{code}/record.json?match=1").json()
            shown = verdicts_through(page, record, seat_of_reader=0)
            assert len(shown) == total == sum(len(r["moves"]) for r in record["rounds"])

            # The page's marks for ana's seat are the command's, for the downloaded record.
            path = tmp_path / "record.json"
            path.write_text(json.dumps(record))
            out = subprocess.run([sys.executable, "-m", "apps.bots.review", str(path),
                                  "--seat", "0", "--deals", str(DEALS)], cwd=ROOT,
                                 capture_output=True, text=True, timeout=600)
            assert out.returncode == 0, out.stderr
            command = json.loads(out.stdout)
            for rnd in command["rounds"]:
                for m in rnd["moves"]:
                    kind = ("forced" if m["forced"] else m["mark"]
                            or ("agrees" if m["best"] == m["played"] else "close"))
                    assert shown[(rnd["number"] - 1, m["index"])] == kind, (rnd["number"], m)
            stored = context.request.get(f"{base}/t/{code}/matches/1/review.json").json()
            assert [[m for m in r["moves"] if m["seat"] == 0] for r in stored["result"]["rounds"]] \
                == [r["moves"] for r in command["rounds"]]

            # Stepping says each move's verdict; a costly move's button goes to it.
            page.keyboard.press("Home")
            assert "Step through" in page.locator("#review-verdict").inner_text()
            page.keyboard.press("ArrowRight")
            opener = ("ana", "bea", "caio", "dani")[record["rounds"][0]["moves"][0]["seat"]]
            assert page.locator("#review-verdict").inner_text().startswith(f"Move 1, {opener}:")
            costly = [(k, i) for (k, i), v in shown.items()
                      if v in ("inaccuracy", "mistake", "blunder")]
            if costly:
                k, i = costly[0]
                page.evaluate(f"""document.dispatchEvent(new CustomEvent('replay:go',
                    {{detail: {{round: {k}, ply: 0}}}}))""")
                page.click(f"#review-costly button[data-ply='{i + 1}']")
                where = page.evaluate("Object.assign({}, document.getElementById("
                                      "'replay-where').dataset)")
                assert (int(where["round"]), int(where["ply"])) == (k, i + 1)
                assert page.locator("#review-verdict").get_attribute("class").split()[-1] \
                    == shown[(k, i)]
                assert page.locator("#replay-moves li.current").get_attribute(
                    "data-verdict") == shown[(k, i)]
            axe_check(page, "review (ana, en)")
            shoot(page, "review-en")
            assert page.evaluate("window.__csp") == []

            # A second visit: the stored review, at once, with nothing to press.
            page.reload()
            wait_until(page, "document.getElementById('review').dataset.state === 'done'")
            assert page.locator("#review-form").is_hidden()
            assert page.locator("#review-body").is_visible()
            context.close()

            # ana's second match, past her hourly limit (one, here): refused with the message,
            # and nothing is made.
            second = made["codes"]["second"]
            refused: list[str] = []  # the browser logs the 429 itself, as an error
            context, page = open_replay(browser, base, made["sessions"]["ana"], DESKTOP, "en",
                                        second, "ana", refused)
            page.click("#review-ask")
            page.wait_for_selector("#review-error:not([hidden])")
            assert "You can have 1 match reviewed an hour" in page.locator(
                "#review-error").inner_text()
            assert page.locator("#review-ask").is_enabled()
            assert page.locator("#review-body").is_hidden()
            assert context.request.get(
                f"{base}/t/{second}/matches/1/review.json").json()["status"] == "none"
            assert [e for e in refused if "status of 429" not in e] == [], refused
            context.close()
            assert not errors, errors
        finally:
            browser.close()
    site.stop(timeout=40)
