"""The site in a real browser, as four new players use it, against the site served by the run
command (Daphne + the real channel layer + Celery worker and beat):

- ana (Spanish, desktop), bruno (Brazilian Portuguese, a phone: 390x844, touch), carol (English,
  desktop, keyboard only at the table) and dani (Spanish, desktop) sign up through the sign-up
  page; dani signs out and in again through the sign-in page;
- ana creates the table through the create page; bruno and dani join by typing its code on the
  home page, carol by its link;
- they play a whole round: bruno by tapping, carol with the keyboard alone (Tab to the hand,
  arrows to a tile, Enter, the end buttons, Tab to Pass), ana and dani by clicking;
- axe-core (vendored, tests/browser/vendor/) finds no serious or critical violation, colour
  contrast included, on every page in PAGES and on the table mid-round and at the round's end,
  in each language; no page logs a console error.

Screenshots of the table (mid-round and at the round's end), the sign-up page and the profile
page at 390x844 and 1280x800 in each language are written to var/screenshots/ (the committed
ones come from this test; `make screenshots` renews them)."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

CHROMIUM_NEEDED = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                                     reason="needs /usr/bin/chromium")
pytestmark = [pytest.mark.browser, pytest.mark.slow, CHROMIUM_NEEDED]

ROOT = Path(__file__).resolve().parent.parent.parent
#: Screenshots go under var/ (untracked): a test run leaves the clone clean. `make screenshots`
#: points SCREENSHOTS_DIR at var/screenshots/ to renew the committed ones.
SHOTS = Path(os.environ.get("SCREENSHOTS_DIR") or ROOT / "var" / "screenshots")
AXE = Path(__file__).resolve().parent / "vendor" / "axe.min.js"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
PASSWORD = "Domino-Club-2026!"

#: name, language, viewport, how they play at the table ("click", "tap" or "keys").
PEOPLE = [("ana", "es", DESKTOP, "click"), ("bruno", "pt-br", PHONE, "tap"),
          ("carol", "en", DESKTOP, "keys"), ("dani", "es", DESKTOP, "click")]
#: The avatar each picks on the sign-up page.
AVATARS = {"ana": "cat", "bruno": "owl", "carol": "fox", "dani": "panda"}

#: Pages checked with axe and for console errors, signed out and signed in, by name and path
#: ({code} is the table's code). The table page is also checked mid-round and at the round's
#: end during the game. A new page (the replay page) joins with one line here.
SIGNED_OUT_PAGES = [("home (signed out)", "/"), ("sign-up", "/accounts/signup/"),
                    ("sign-in", "/accounts/login/"), ("lobby (signed out)", "/lobby/")]
SIGNED_IN_PAGES = [("home", "/"), ("profile", "/accounts/profile/"), ("create", "/tables/new/"),
                   ("lobby", "/lobby/"), ("table", "/t/{code}/"),
                   ("replay", "/t/{replay}/matches/1/replay/")]
#: Words a pass is announced with, per language: the announcement names the numbers.
PASS_WORDS = {"es": "se pasó con", "pt-br": "passou com", "en": "passed on"}


# -- checks --------------------------------------------------------------------------------------

def axe_check(page, name: str) -> None:
    """No serious or critical axe violation on the page as it is now (WCAG 2.1 A/AA rules,
    colour contrast included)."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE.read_text())  # evaluated, not a <script>: no page policy applies
    result = page.evaluate("""async () => {
        const r = await axe.run(document, {runOnly: {type: 'tag',
            values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}});
        return r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
          .map(v => ({id: v.id, impact: v.impact, help: v.help,
                      nodes: v.nodes.slice(0, 4).map(n => n.target.join(' ') + ' :: '
                        + (n.failureSummary || '').replace(/\\s+/g, ' ').slice(0, 200))}));
    }""")
    assert not result, f"axe on {name} ({page.url}): {result}"


def wait_until(page, expression: str, timeout: float = 10000) -> None:
    """page.wait_for_function, but by polling page.evaluate: wait_for_function evals its
    predicate inside the page, which the site's Content-Security-Policy refuses."""
    deadline = time.monotonic() + timeout / 1000
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise TimeoutError(f"not true after {timeout} ms: {expression}")
        time.sleep(0.05)


def watch_console(page, who: str, errors: list[str]) -> None:
    page.on("console", lambda msg: errors.append(f"{who} {page.url}: {msg.text}")
            if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(f"{who} {page.url}: {exc}"))


def no_horizontal_scroll(page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    inner = page.evaluate("window.innerWidth")
    assert width <= inner, f"{page.url} scrolls sideways: {width} > {inner}"


def shoot(page, name: str) -> None:
    """Screenshots at the phone's and the desktop's size; the page's own size is put back."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size
    for view in (PHONE, DESKTOP):
        page.set_viewport_size(view)
        page.wait_for_timeout(400)  # the resize re-lays the line
        no_horizontal_scroll(page)
        page.screenshot(path=str(SHOTS / f"{name}-{view['width']}x{view['height']}.png"),
                        full_page=True)
    page.set_viewport_size(size)
    page.wait_for_timeout(300)


# -- signing up, creating, joining --------------------------------------------------------------

def sign_up(page, base: str, name: str, lang: str) -> None:
    page.goto(f"{base}/")
    page.click('a[href="/accounts/signup/"]')
    page.wait_for_selector("form.account-form")
    page.fill("#id_username", name)
    page.fill("#id_email", f"{name}@example.com")
    page.fill("#id_password1", PASSWORD)
    page.fill("#id_password2", PASSWORD)
    page.fill("#id_display_name", name)
    page.check(f'input[name=avatar][value="{AVATARS[name]}"]')
    page.select_option("#id_language", lang)
    page.click("form.account-form button[type=submit]")
    page.wait_for_url(f"{base}/")
    assert page.locator("html").get_attribute("lang") == lang
    assert page.locator('.site-nav a[href="/accounts/profile/"]').inner_text() == name


def sign_out_and_in(page, base: str, name: str) -> None:
    page.goto(f"{base}/accounts/profile/")
    page.click('form[action="/accounts/logout/"] button')
    page.wait_for_url(f"{base}/")
    page.click('.site-nav a[href="/accounts/login/"]')
    page.fill("#id_username", name)
    page.fill("#id_password", PASSWORD)
    page.click("form.account-form button[type=submit]")
    page.wait_for_url(f"{base}/")
    assert page.locator('.site-nav a[href="/accounts/profile/"]').inner_text() == name


def create_table(page, base: str) -> tuple[str, str]:
    page.click('.site-nav a[href="/tables/new/"]')
    page.wait_for_selector("#create-table")
    page.select_option("#id_preset", "partners")
    page.click("#create-table button[type=submit]")
    page.wait_for_url(re.compile(r".*/t/[A-Z0-9]+/$"))
    code = page.locator(".share .code").inner_text().strip()
    return code, page.locator("#join-link").input_value()


def join_by_code(page, base: str, typed: str) -> None:
    page.goto(f"{base}/")
    page.fill("input[name=code]", typed)
    page.click('form[action="/"] button[type=submit]')
    page.wait_for_url(re.compile(r".*/t/[A-Z0-9]+/$"))


def join_by_link(page, link: str) -> None:
    page.goto(link)
    page.click(".seat-form button[type=submit]")
    page.wait_for_selector("#status.ok", timeout=15000)


# -- playing --------------------------------------------------------------------------------------

def my_turn(page) -> bool:
    return page.evaluate("document.getElementById('turn').classList.contains('mine')")


def round_over(page) -> bool:
    return page.locator("#result").is_visible()


def whose_turn(pages, timeout: float = 20.0) -> int | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(round_over(p) for p in pages):
            return None
        for i, page in enumerate(pages):
            if my_turn(page) and not round_over(page):
                return i
        time.sleep(0.05)
    raise AssertionError("nobody's turn")


def active(page, js: str):
    return page.evaluate(f"(() => {{ const a = document.activeElement; return {js}; }})()")


def play_by_keys(page) -> str:
    """One move with the keyboard alone: Tab to the hand (one tab stop), arrows to a tile that
    fits, Enter, and the end buttons when it fits both ends; or Tab on to Pass and Enter."""
    if not active(page, "!!a.closest('#hand')"):
        for _ in range(60):
            page.keyboard.press("Tab")
            if active(page, "!!a.closest('#hand')"):
                break
        else:
            raise AssertionError("Tab never reached the hand")
    if page.locator("#pass").is_enabled():
        page.keyboard.press("Tab")
        assert active(page, "a.id") == "pass"
        page.keyboard.press("Enter")
        return "pass"
    for _ in range(8):
        if active(page, "a.getAttribute('aria-disabled')") == "false":
            break
        page.keyboard.press("ArrowRight")
    assert active(page, "a.getAttribute('aria-disabled')") == "false"
    page.keyboard.press("Enter")
    page.wait_for_timeout(150)
    if page.locator("#end-choice").is_visible():
        assert active(page, "a.classList.contains('end-button')")
        page.keyboard.press("ArrowRight")  # the second end, to use the arrows too
        if not active(page, "a.classList.contains('end-button')"):
            page.keyboard.press("ArrowLeft")
        page.keyboard.press("Enter")
        return "end"
    return "tile"


def play_by_pointer(page, how: str, state: dict) -> str:
    act = (lambda loc: loc.tap()) if how == "tap" else (lambda loc: loc.click())
    if page.locator("#pass").is_enabled():
        act(page.locator("#pass"))
        return "pass"
    tiles = page.locator('#hand .hand-tile[aria-disabled="false"]')
    assert tiles.count() > 0, "my turn, no legal tile and no pass"
    act(tiles.first)
    page.wait_for_timeout(150)
    if page.locator("#end-choice").is_visible():
        # Both ends fit: choose by tapping the highlighted end on the board, or with the end
        # buttons.
        if not state.get("picked_on_board"):
            act(page.locator("#line .end-marker.pick").first)
            state["picked_on_board"] = True
        else:
            act(page.locator("#end-choice .end-button").last)
        return "end"
    return "tile"


def hand_readable_while_waiting(page) -> None:
    """Not your turn: every tile of your hand at full opacity, none raised."""
    looks = page.eval_on_selector_all(
        "#hand .hand-tile", "ns => ns.map(n => [getComputedStyle(n).opacity, n.className])")
    assert looks, "no hand"
    for opacity, cls in looks:
        assert float(opacity) == 1.0 and "legal" not in cls and "dim" not in cls, (opacity, cls)


def test_four_people_sign_up_meet_and_play_a_round(run_site, monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    site = run_site()
    base = site.base_url
    errors: list[str] = []
    checked: set[tuple[str, str]] = set()
    shot_signup: set[str] = set()

    def check(page, name: str, lang: str) -> None:
        axe_check(page, f"{name} [{lang}]")
        checked.add((name, lang))

    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            pages = []
            sounds: dict[str, list[str]] = {}
            for name, lang, view, how in PEOPLE:
                context = browser.new_context(viewport=view, locale=lang,
                                              has_touch=how == "tap", is_mobile=how == "tap")
                page = context.new_page()
                watch_console(page, name, errors)
                sounds[name] = []
                page.on("request", lambda req, who=name: sounds[who].append(req.url)
                        if "/static/sounds/" in req.url else None)
                pages.append(page)

            # Signed out, then signing up through the pages (dani signs out and in again).
            for page, (name, lang, _view, _how) in zip(pages, PEOPLE, strict=True):
                if not any(lang == done for _n, done in checked):
                    for label, path in SIGNED_OUT_PAGES:
                        page.goto(base + path)
                        check(page, label, lang)
                if lang not in shot_signup:
                    page.goto(f"{base}/accounts/signup/")
                    shoot(page, f"signup-{lang}")
                    shot_signup.add(lang)
                sign_up(page, base, name, lang)
            sign_out_and_in(pages[3], base, "dani")

            # ana creates the table; bruno and dani type its code (dani as people do, in lower
            # case with a space), carol follows its link. Seats fill in that order.
            code, link = create_table(pages[0], base)
            join_by_code(pages[1], base, code)
            join_by_link(pages[2], link)
            join_by_code(pages[3], base, f" {code[:3].lower()} {code[3:].lower()} ")
            for page in pages:
                if page.url != link:
                    page.goto(link)
                page.wait_for_selector("#status.ok", timeout=15000)
                page.evaluate("""() => { window.__said = [];
                    new MutationObserver(() => { const t = document.getElementById('announce')
                      .textContent; if (t) window.__said.push(t); })
                    .observe(document.getElementById('announce'),
                             {childList: true, characterData: true, subtree: true}); }""")
            for page, (_n, lang, _v, _h) in zip(pages, PEOPLE, strict=True):
                assert page.locator("html").get_attribute("lang") == lang
                assert page.locator("#felt .seat:not(.empty)").count() == 4
            assert pages[0].locator("details.share").evaluate("d => d.open")

            # The host starts; the invitation panel folds away.
            assert pages[1].locator("#host").is_hidden()
            pages[0].click("#host [data-action=start]")
            for page in pages:
                wait_until(page, "document.querySelectorAll('#hand .hand-tile').length === 7",
                           timeout=15000)
            assert not pages[0].locator("details.share").evaluate("d => d.open")
            hands = [page.eval_on_selector_all("#hand .hand-tile",
                                               "ns => ns.map(n => n.dataset.tile)")
                     for page in pages]
            # Seed 004's options from the table page: ana's tiles grow, bruno turns sounds on
            # (fetched then, never before), carol keeps them off.
            width = "document.querySelector('#hand .hand-tile svg').getBoundingClientRect().width"
            before = pages[0].evaluate(width)
            pages[0].click("details.options summary")
            pages[0].select_option("#options [name=tile_size]", "large")
            wait_until(pages[0], f"{width} > {before}")
            assert not sounds["bruno"]
            pages[1].locator("details.options summary").tap()
            pages[1].locator("#options [name=sounds]").tap()
            wait_until(pages[1], "document.querySelector('#options [name=sounds]').checked")
            assert len({t for h in hands for t in h}) == 28
            for seat, page in enumerate(pages):
                # Your seat at the bottom, partners facing, three others with backs only.
                assert page.locator("#slot-bottom .seat").get_attribute("data-seat") == str(seat)
                top = page.locator("#slot-top .seat").get_attribute("data-seat")
                assert top == str((seat + 2) % 4)
                assert page.locator("#felt .backs").count() == 3

            # Waiting, your own hand is as readable as on your turn.
            turn = whose_turn(pages)
            hand_readable_while_waiting(pages[(turn + 1) % 4])

            # Paused: nothing is raised, a tap says why nothing happens; then resume.
            pages[0].click("#host [data-action=pause]")
            for page in pages:
                page.wait_for_selector("#paused", state="visible", timeout=10000)
            mover = pages[turn]
            assert mover.locator("#hand .hand-tile.legal").count() == 0
            mover.locator("#hand .hand-tile").first.dispatch_event("click")
            assert mover.locator("#status").inner_text().strip()
            pages[0].click("#host [data-action=resume]")
            for page in pages:
                page.wait_for_selector("#paused", state="hidden", timeout=10000)

            # The whole round, each as they play; from mid-round on dani lets the table play
            # for her (play automatically), and everyone sees those moves as the table's.
            plies = 0
            kinds: set[str] = set()
            pointer: dict = {}
            shot = False
            auto = False
            while (turn := whose_turn(pages)) is not None:
                page = pages[turn]
                how = PEOPLE[turn][3]
                if auto and turn == 3:
                    wait_until(
                        page, "!document.getElementById('turn').classList.contains('mine')"
                        " || !document.getElementById('result').hidden", timeout=15000)
                    kinds.add("table")
                    plies += 1
                    continue
                kinds.add(f"{how}:" + (play_by_keys(page) if how == "keys"
                                       else play_by_pointer(page, how, pointer)))
                wait_until(
                    page, "!document.getElementById('turn').classList.contains('mine')"
                    " || !document.getElementById('result').hidden", timeout=10000)
                plies += 1
                if plies == 8 and not shot:
                    # Mid-round: the last move is marked on every page; axe and screenshots.
                    for page, (_n, lang, _v, _h) in zip(pages[:3], PEOPLE, strict=False):
                        page.wait_for_selector("#line .tile.last", timeout=5000)
                        assert page.locator("#last-move").inner_text().strip()
                        check(page, "table mid-round", lang)
                        shoot(page, f"table-{lang}-play")
                    shot = True
                    pages[3].check("#prefs [name=auto_play]")
                    auto = True
                assert plies < 80
            assert plies >= 4 and shot
            assert any(k.startswith("keys:") for k in kinds), kinds
            assert any(k.startswith("tap:") for k in kinds), kinds
            # dani's moves since are the table's, written so in everyone's list of moves.
            assert "table" in kinds, kinds
            by_table = pages[0].eval_on_selector_all(
                "#moves-list li.by-table", "ns => ns.map(n => n.textContent)")
            assert any("dani" in t and ("(jugada por la mesa)" in t or "(pase de la mesa)" in t)
                       for t in by_table), by_table
            assert sounds["bruno"] and all(u.endswith(".wav") for u in sounds["bruno"])
            assert not sounds["ana"] and not sounds["carol"] and not sounds["dani"]

            # The round's end on every page: the reason, four revealed hands big enough to
            # count, each one image for screen readers.
            for page in pages:
                page.wait_for_selector("#result", state="visible", timeout=10000)
                assert page.locator("#result .sentence").inner_text().strip()
                assert page.locator("#result .revealed li").count() == 4
                for tiles in page.locator("#result .revealed .tiles").all():
                    assert tiles.get_attribute("role") == "img"
                    assert tiles.get_attribute("aria-label")
                svgs = page.locator("#result .revealed .tiles svg")
                if svgs.count():
                    assert svgs.first.bounding_box()["height"] >= 15
            # Every pass of the round is written with its numbers, and was said with them.
            moves = pages[0].eval_on_selector_all("#moves-list li.pass",
                                                  "ns => ns.map(n => n.textContent)")
            for text in moves:
                assert PASS_WORDS["es"] in text, text
            if moves:
                for page, (_n, lang, _v, _h) in zip(pages, PEOPLE, strict=True):
                    said = page.evaluate("window.__said")
                    assert any(PASS_WORDS[lang] in s for s in said), (lang, said[-8:])
            for page, (_n, lang, _v, _h) in zip(pages[:3], PEOPLE, strict=False):
                check(page, "table at the round's end", lang)
                shoot(page, f"table-{lang}-result")
            assert pages[0].locator("#host [data-action=next_round]").is_visible() or \
                pages[0].locator("#host [data-action=new_match]").is_visible()

            # The other pages, signed in, in each language; {replay} is a finished public
            # match of dani and ana, played through the services.
            from .matches import PUBLIC_MATCH, shell

            replay = shell(site, PUBLIC_MATCH)["replay"]
            for page, (_n, lang, _v, _h) in zip(pages[:3], PEOPLE, strict=False):
                for label, path in SIGNED_IN_PAGES:
                    page.goto(base + path.format(code=code, replay=replay))
                    page.wait_for_load_state("load")
                    check(page, label, lang)
                    if label == "profile":
                        shoot(page, f"profile-{lang}")
            for name, _path in SIGNED_OUT_PAGES + SIGNED_IN_PAGES:
                assert {lang for n, lang in checked if n == name} == {"es", "pt-br", "en"}, name
            assert not errors, errors
        finally:
            browser.close()
    site.stop(timeout=40)
