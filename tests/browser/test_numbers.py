"""The numbers players see, in a real browser against the site served by the run command
(Daphne, the Celery worker that computes the review, beat): one site for the module.

ana (English), bea (Spanish) and caio (Brazilian Portuguese) played at least four rated
three-player matches on public tables (real ratings). ana asks for the last match's review on
its replay page; once the worker is done each move of the list shows its accuracy (the JSON's),
stepping says a move's accuracy, and each player's accuracy for the match is listed. bea and
caio read the same review in their languages. Each profile shows the rating's history as a
server-drawn SVG chart, the reviewed match's accuracy in the list and on its history row. Then
ana trains on her mistakes: the exercise page shows her hand and no other tile of the deal, she
finds the bot's move, reads why, and her progress is kept.

Screenshots: var/screenshots/numbers-review-*.png, numbers-profile-*.png,
numbers-exercise-*.png, numbers-training-*.png (phone and desktop).
"""

from __future__ import annotations

import pytest

from .matches import FINISH, shell
from .test_replay import LISTEN
from .test_table_page import ARGS, DESKTOP, axe_check, shoot, wait_until, watch_console

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("numbers"),
              pytest.mark.skipif(not __import__("pathlib").Path("/usr/bin/chromium").exists(),
                                 reason="needs /usr/bin/chromium")]

#: Deals per candidate move: the review takes a second or two.
DEALS = 8
LANGUAGES = {"ana": "en", "bea": "es", "caio": "pt-br"}

SETUP = FINISH + """
import json
from django.contrib.auth import get_user_model
from django.test import Client
from apps.bots.review import review_budget, review_record
from apps.tables.selectors import finished_record

U = get_user_model()
people = {}
for n, lang in LANGUAGES.items():
    u = U.objects.create_user(username=n, password="pw-" + n * 2)
    u.profile.language = lang
    u.profile.save()
    people[n] = u
codes = []
chosen = None
for seed in range(1, 9):
    table = services.create_table(host=people["ana"], preset="draw", players=3, public=True,
                                  options={"target": 10, "turn_seconds": None})
    for n in ("bea", "caio"):
        services.join_table(user=people[n], table_id=table.pk, code=table.code)
    finish(table, people["ana"], seed)
    codes.append(table.code)
    # The review the worker will compute (same record, seed and deals): the match to review is
    # one where ana made a marked move, so that she has exercises.
    result = review_record(finished_record(table, 1), budget=review_budget(DEALS))
    marked = {m["seat"] for r in result["rounds"] for m in r["moves"] if m["mark"]}
    if len(codes) >= 4 and 0 in marked:
        chosen = table.code
        break
sessions = {}
for n, u in people.items():
    c = Client()
    c.force_login(u)
    sessions[n] = c.cookies["sessionid"].value
print(json.dumps({"sessions": sessions, "codes": codes, "code": chosen}))
""".replace("LANGUAGES", repr(LANGUAGES)).replace("DEALS", str(DEALS))

EXERCISE = """
import json
from django.utils import translation
from apps.bots.review import engine_move
from apps.reviews.models import Exercise
from apps.reviews.services import is_best
from apps.reviews.words import tile_words
from apps.rules.engine import Match
from apps.rules.presets import make_rules
from apps.rules.tiles import NAMES, parse_tile
from apps.tables.selectors import finished_record
e = Exercise.objects.filter(user__username="ana").order_by("-loss", "pk").first()
best = [i for i in range(len(e.view["legal"])) if is_best(e, i)]
# The tiles ana could not see then: the others' hands and the boneyard, replayed by the engine.
record = finished_record(e.review.match.table, e.review.match.number)
engine = Match(make_rules(record["rules"], record.get("players")))
for k, raw_round in enumerate(record["rounds"][:e.round_index + 1]):
    rnd = engine.start_round([[parse_tile(t)[0] for t in h] for h in raw_round["hands"]],
                             [parse_tile(t)[0] for t in raw_round.get("boneyard", [])],
                             raw_round.get("opener"))
    moves = raw_round["moves"][:e.move_index] if k == e.round_index else raw_round["moves"]
    for raw in moves:
        engine.play(*engine_move(rnd, raw), written=raw)
rnd = engine.rounds[-1]
hidden = [t for s, h in enumerate(rnd.hands) if s != e.seat for t in h]
hidden += list(rnd.boneyard[rnd.bone_pos:])
with translation.override("en"):
    hidden_words = sorted({tile_words(NAMES[t]) for t in hidden}
                          | {tile_words("-".join(reversed(NAMES[t].split("-")))) for t in hidden})
print(json.dumps({"pk": e.pk, "best": best, "hand": e.view["hand"], "hidden": hidden_words}))
"""

PROGRESS = """
import json
from apps.reviews.models import Exercise
e = Exercise.objects.get(pk=PK)
print(json.dumps({"answer": e.answer, "correct": e.correct}))
"""


@pytest.fixture(scope="module")
def numbers_site(module_site):
    """The site and what SETUP made in it, for the module's tests; stopped after the last."""
    site = module_site(env={"REVIEW_DEALS": str(DEALS)})
    made = shell(site, SETUP)
    assert made["code"], "no match where ana made a marked move"
    yield site, made
    site.stop(timeout=40)


def visit(browser, site, made, name: str, errors: list[str], viewport=DESKTOP):
    context = browser.new_context(viewport=viewport, locale=LANGUAGES[name])
    context.add_cookies([{"name": "sessionid", "value": made["sessions"][name],
                          "url": site.base_url}])
    context.add_init_script(LISTEN)
    page = context.new_page()
    watch_console(page, name, errors)
    return context, page


def reviewed(page, base: str, code: str) -> None:
    """The replay page of ``code``'s match with its review done (asked for when it is not)."""
    page.goto(f"{base}/t/{code}/matches/1/replay/")
    page.wait_for_selector("#replay-where[data-round]")
    wait_until(page, "document.getElementById('review').dataset.state !== undefined")
    if page.evaluate("document.getElementById('review').dataset.state") != "done":
        page.click("#review-ask")
    wait_until(page, "document.getElementById('review').dataset.state === 'done'", 180000)


def test_players_see_accuracy_on_the_review_and_the_rating_chart_on_the_profile(numbers_site,
                                                                              monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    site, made = numbers_site
    base, code = site.base_url, made["code"]
    errors: list[str] = []
    words = {"en": ("Accuracy in this match", "Accuracy of this move", "Rating, Individual",
                    "Accuracy in your reviewed matches", "Accuracy:"),
             "es": ("Precisión en esta partida", "Precisión de esta jugada", "Valoración",
                    "Precisión en tus partidas analizadas", "Precisión:"),
             "pt-br": ("Precisão nesta partida", "Precisão desta jogada", "Pontuação",
                       "Precisão nas suas partidas analisadas", "Precisão:")}
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            for name in ("ana", "bea", "caio"):
                lang = LANGUAGES[name]
                context, page = visit(browser, site, made, name, errors)
                reviewed(page, base, code)
                data = context.request.get(f"{base}/t/{code}/matches/1/review.json").json()
                players = data["accuracy"]["players"]
                # Each player's accuracy for the match, the reader first.
                assert page.locator("#review-players-title").inner_text() == words[lang][0]
                rows = page.locator("#review-players li")
                assert rows.count() == 3
                mine = page.locator("#review-players li.mine")
                assert mine.count() == 1 and name in mine.inner_text()
                assert float(mine.get_attribute("data-accuracy")) == players[0]["accuracy"]
                assert "%" in mine.inner_text()
                # Each judged move of the list shows its accuracy, the JSON's.
                page.evaluate("""document.dispatchEvent(new CustomEvent('replay:go',
                    {detail: {round: 0, ply: 1}}))""")
                shown = page.eval_on_selector_all(
                    "#replay-moves li", "ns => ns.map(n => { const a = n.querySelector("
                    "'.accuracy'); return a ? Number(a.dataset.accuracy) : null; })")
                want = [data["accuracy"]["moves"].get(f"0:{i}") for i in range(len(shown))]
                assert shown == want and any(v is not None for v in shown)
                judged = next(i for i, v in enumerate(want) if v is not None)
                page.evaluate(f"""document.dispatchEvent(new CustomEvent('replay:go',
                    {{detail: {{round: 0, ply: {judged + 1}}}}}))""")
                assert words[lang][1] in page.locator("#review-verdict").inner_text()
                assert page.evaluate("window.__csp") == []
                if name == "ana":
                    axe_check(page, "review with accuracy (en)")
                    shoot(page, "numbers-review-en")

                # The profile: the rating chart (a point per rated match and the start), the last
                # reviewed match's accuracy, the history row's.
                page.goto(f"{base}/accounts/profile/")
                chart = page.locator("#rating-chart-solo")
                assert chart.is_visible() and words[lang][2] in chart.inner_text()
                points = chart.locator("polyline.rating-line").get_attribute("points").split()
                assert len(points) == len(made["codes"]) + 1
                assert chart.locator("circle.rating-dot").count() == len(points)
                box = chart.locator("svg").bounding_box()
                assert box["width"] > 200 and box["height"] > 60
                numbers = page.locator("#review-numbers")
                assert words[lang][3] in numbers.inner_text()
                assert numbers.locator("#accuracy-list li").count() == 1
                assert "%" in numbers.locator("#accuracy-list li").inner_text()
                history = page.locator("ol.history .accuracy")
                assert history.count() == 1 and words[lang][4] in history.inner_text()
                assert float(history.get_attribute("data-accuracy")) == players[0]["accuracy"]
                assert page.evaluate("window.__csp") == []
                axe_check(page, f"profile with the rating chart ({lang})")
                if name == "ana":
                    shoot(page, "numbers-profile-en")
                context.close()
            assert not errors, errors
        finally:
            browser.close()


def test_an_exercise_from_a_real_review_is_solved(numbers_site, monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    site, made = numbers_site
    base = site.base_url
    errors: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            context, page = visit(browser, site, made, "ana", errors)
            reviewed(page, base, made["code"])  # the worker made the exercises with it
            exercise = shell(site, EXERCISE)
            # From the profile's link to the list, then the costliest exercise.
            page.goto(f"{base}/accounts/profile/")
            page.click("#training-link")
            page.wait_for_selector("#exercise-next")
            page.goto(f"{base}/training/{exercise['pk']}/")
            assert page.locator("h1").inner_text() == "Find the better move"
            # Only ana's hand: no other tile of the deal is on the page.
            hand = page.eval_on_selector_all("#exercise-hand [data-tile]",
                                             "ns => ns.map(n => n.dataset.tile)")
            assert hand == exercise["hand"]
            labels = set(page.eval_on_selector_all(
                "svg.domino", "ns => ns.map(n => n.getAttribute('aria-label'))"))
            assert labels and not labels & set(exercise["hidden"]), labels
            assert page.locator("#exercise-answer").count() == 0
            axe_check(page, "exercise")
            # The bot's move: found, the answer and why, the progress kept.
            page.click(f"button[data-choice='{exercise['best'][0]}']")
            page.wait_for_selector("#exercise-answer")
            assert "Well found" in page.locator("#exercise-verdict").inner_text()
            assert page.locator(".exercise-reasons li").count() >= 1
            assert "1 of" in page.locator("#exercise-progress").inner_text()
            assert shell(site, PROGRESS.replace("PK", str(exercise["pk"]))) == {
                "answer": exercise["best"][0], "correct": True}
            assert page.evaluate("window.__csp") == []
            axe_check(page, "exercise answered")
            shoot(page, "numbers-exercise-en")
            # The list: this one found, the others still to try.
            page.goto(f"{base}/training/")
            assert page.locator(".exercise-list li.found").count() == 1
            axe_check(page, "the exercises")
            shoot(page, "numbers-training-en")
            context.close()
            assert not errors, errors
        finally:
            browser.close()
