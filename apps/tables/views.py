"""Table pages: authenticate, call one service or selector, render or redirect.

Refusals come back from the service layer as :class:`ServiceError` with a translated message,
shown with django's messages framework or as a form error.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.decorators import account_required, signup_url
from apps.accounts.models import GAME_SPEEDS, TILE_SIZES
from apps.accounts.ratelimit import client_address
from apps.accounts.selectors import is_guest
from apps.accounts.services import set_table_options, table_options
from apps.core.errors import ServiceError
from apps.core.protocol import KNOWN_TABLES_KEY, MAX_FRAME

from . import selectors, services
from .forms import (
    FOUR_ONLY,
    PRESET_HELP,
    CodeForm,
    CreateTableForm,
    InviteForm,
    PracticeForm,
    QuickPlayForm,
    TableNameForm,
)
from .models import Table
from .mygames import page_words

#: Wrong invite codes allowed per signed-in user and per address in a window.
CODE_FAILURES_LIMIT = 10
CODE_FAILURES_WINDOW = 600  # seconds


# -- wrong-code limiting (Django's cache: LocMem in one process, shared when it is Redis) ------

def _failure_keys(request) -> list[str]:
    keys = [f"tables:codefail:ip:{request.META.get('REMOTE_ADDR', '')}"]
    if request.user.is_authenticated:
        keys.append(f"tables:codefail:user:{request.user.pk}")
    return keys


def _code_limited(request) -> bool:
    return any((cache.get(key) or 0) >= CODE_FAILURES_LIMIT for key in _failure_keys(request))


def _count_code_failure(request) -> None:
    for key in _failure_keys(request):
        cache.add(key, 0, CODE_FAILURES_WINDOW)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, CODE_FAILURES_WINDOW)


def _remember(request, table: Table) -> None:
    """This browser has the table's code: its socket may show the table (invite-only too)."""
    known = list(request.session.get(KNOWN_TABLES_KEY, []))
    if table.pk not in known:
        request.session[KNOWN_TABLES_KEY] = (known + [table.pk])[-50:]


# -- pages -------------------------------------------------------------------------------------

#: Public tables shown on the home page; the lobby page lists them all.
HOME_LOBBY_ROWS = 8
MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


def home(request):
    code_form = None
    if request.user.is_authenticated:
        code_form = CodeForm(request.POST or None)
        if request.method == "POST":
            response, status = _enter_code(request, code_form)
            if response is not None:
                return response
            return _home_page(request, code_form=code_form, status=status)
    elif request.method == "POST":
        return redirect(f"{reverse('accounts:login')}?next={reverse('home')}")
    return _home_page(request, code_form=code_form)


def _home_page(request, *, code_form: CodeForm | None = None,
               practice_form: PracticeForm | None = None, status: int = 200):
    """The home page, phone first: practice against bots, (quick play), the code, your
    invitations and tables when signed in, sign in / sign up otherwise, and the lobby."""
    signed_in = request.user.is_authenticated
    context: dict = {
        "practice_form": practice_form or PracticeForm(),
        "four_only": list(FOUR_ONLY),
        "lobby_rows": selectors.lobby_rows()[:HOME_LOBBY_ROWS],
        "guest": is_guest(request.user),
    }
    if signed_in:
        context.update(
            code_form=code_form or CodeForm(),
            invitations=selectors.invitations_for(request.user),
            my_tables=selectors.tables_of(request.user),
        )
    return render(request, "tables/home.html", context, status=status)


@require_POST
def practice(request):
    """Play against bots now: one click from the home page to a started match. A visitor
    without an account becomes a guest on the way (made by the same service call)."""
    form = PracticeForm(request.POST)
    if not form.is_valid():
        return _home_page(request, practice_form=form, status=400)
    signed_in = request.user.is_authenticated
    try:
        table = services.open_practice(
            user=request.user if signed_in else None, language=request.LANGUAGE_CODE,
            address=client_address(request), **form.service_kwargs())
    except ServiceError as err:
        form.add_error(None, err.message)
        return _home_page(request, practice_form=form,
                          status=429 if err.code in ("practice_limit", "guest_limit") else 400)
    if not signed_in:
        login(request, table.host, backend=MODEL_BACKEND)
    _remember(request, table)
    return redirect("tables:table", code=table.code)


def _enter_code(request, form: CodeForm):
    """POST of the home page's code form: (redirect, 200) or (None, status) to re-render."""
    if _code_limited(request):
        form.add_error(None, _("Too many wrong codes. Wait a few minutes and try again."))
        return None, 429
    if not form.is_valid():
        return None, 200
    try:
        table = services.find_by_code(form.cleaned_data["code"])
    except ServiceError as err:
        _count_code_failure(request)
        form.add_error("code", err.message)
        return None, 200
    _remember(request, table)
    try:
        services.join_table(user=request.user, table_id=table.pk, code=table.code)
    except ServiceError as err:
        if err.code != "already_seated":
            messages.error(request, err.message)
    return redirect("tables:table", code=table.code), 200


@require_GET
def lobby(request):
    rows = selectors.lobby_rows()
    return render(request, "tables/lobby.html", {
        "rows": [r for r in rows if r["pace"] != "turn"],
        "turn_rows": [r for r in rows if r["pace"] == "turn"]})


@account_required
def create(request):
    # The host's own minimum bot think time (profile) is where the form starts.
    think = getattr(getattr(request.user, "profile", None), "bot_think_ms", None)
    form = CreateTableForm(request.POST or None,
                           initial={"bot_think_ms": think} if think is not None else None)
    if request.method == "POST" and form.is_valid():
        try:
            table = services.create_table(host=request.user, **form.service_kwargs())
        except ServiceError as err:
            form.add_error(None, err.message)
        else:
            _remember(request, table)
            return redirect("tables:table", code=table.code)
    return render(request, "tables/create.html",
                  {"form": form, "preset_help": [(k, str(v)) for k, v in PRESET_HELP.items()]})


@require_POST
def quick_play(request):
    """"Play now": seated at a waiting quick table of the game, or at a new one."""
    if not request.user.is_authenticated:
        messages.info(request, _("Sign in or sign up to play online."))
        return redirect(f"{reverse('accounts:login')}?next={reverse('home')}")
    form = QuickPlayForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Choose a game, and for draw, block, all fives or tranca "
                                  "2, 3 or 4 players."))
        return redirect("home")
    try:
        table = services.quick_play(user=request.user, **form.service_kwargs())
    except ServiceError as err:
        messages.error(request, err.message)
        return redirect("home")
    _remember(request, table)
    return redirect("tables:table", code=table.code)


def _table_or_404(code: str) -> Table:
    return get_object_or_404(Table.objects.select_related("host"), code=code.upper())


def table_page(request, code: str):
    table = _table_or_404(code)
    if table.practice and not selectors.is_practising_at(table, request.user):
        raise Http404  # as its socket: 4404 (docs/protocol.md)
    if request.user.is_authenticated:
        _remember(request, table)
    if selectors.watching_refused(table_id=table.pk, user=request.user):
        return render(request, "tables/watching_off.html", {"table": table}, status=403)
    state = selectors.table_state(table_id=table.pk, user=request.user)
    seated = state["you"]["seat"] is not None
    free = any(s["empty"] for s in state["seats"])
    # A quick table's host is only whoever came first: they may leave like anyone.
    may_leave = seated and (table.host_id != request.user.pk or table.quick)
    context = {
        "table": table,
        "state": state,
        "can_join": (request.user.is_authenticated and not seated and free
                     and table.state == Table.State.WAITING),
        "can_leave": may_leave and table.state == Table.State.WAITING,
        # Once the match is on, leaving is asked again first: a bot takes the seat, and fair
        # play counts the match as left. The page shows it while the match is on.
        "may_leave_match": may_leave and table.state != Table.State.CLOSED,
        "leave_match_now": (may_leave and table.state == Table.State.PLAYING
                            and not state["seats"][state["you"]["seat"]].get("leaving")),
        "is_host": state["you"]["host"],
        "invite_form": InviteForm() if state["you"]["host"] else None,
        "name_form": (TableNameForm(initial={"name": table.name})
                      if state["you"]["host"] and table.state != Table.State.CLOSED else None),
        "join_url": request.build_absolute_uri(reverse("tables:table", args=[table.code])),
        "may_download": selectors.may_download(table, request.user),
        "last_finished": selectors.last_finished_match(table, request.user),
        "has_record": selectors.has_record(table),
        "socket_path": f"/ws/table/{table.pk}/",
        "strings": _js_strings(),
        "max_frame": MAX_FRAME,
        "prefs": _preferences(request.user),
        "auto_pass_always": table.preset in services.AUTO_PASS_PRESETS,
        "bot_think_seconds": table.bot_think_ms / 1000 if table.allow_bots else None,
        "sounds_url": static("sounds/"),
        "tile_sizes": TILE_SIZES,
        "game_speeds": GAME_SPEEDS,
        "guest": is_guest(request.user),
        "signup_url": signup_url(reverse("tables:table", args=[table.code])),
        # A visitor with the link of a public table can watch once they have a session.
        "watch_as_guest": (not request.user.is_authenticated and table.public
                           and table.state != Table.State.CLOSED),
    }
    return render(request, "tables/table.html", context)


#: The profile's defaults, for a visitor who is not signed in.
DEFAULT_PREFERENCES = {"auto_pass": False, "auto_play": False, "learning_mode": False,
                       "arrange_tiles": True, "sounds": False, "tile_size": "medium",
                       "game_speed": "normal", "bot_think_ms": 1000}


def _preferences(user) -> dict:
    profile = getattr(user, "profile", None) if user.is_authenticated else None
    return dict(DEFAULT_PREFERENCES, **(table_options(profile) if profile else {}))


def _js_strings() -> dict:
    """Every word table.js shows, in the page's language."""
    return {
        **page_words(),
        "numbers": selectors.number_words(),
        "resumed": _("The game goes on."),
        "standin": _("played by a bot"),
        "standin_help": _("Away too long: a bot plays this hand until the round ends."),
        "closed": _("This table is closed."),
        "end_label": _("end %(end)s: %(n)s"),
        "play_at": _("Play %(tile)s at end %(end)s"),
        "spinner_arm": _("Spinner, end %(end)s"),
        "partner": _("partner"),
        "opponent": _("opponent"),
        "games_won": _("%(n)s games"),
        "best_of": _("Best of %(n)s"),
        "cannot_play": _("does not fit"),
        "does_not_fit": _("%(tile)s does not fit now."),
        "learning": _("Learning mode"),
        "unseen_help": _("Tiles of each number you have not seen yet (not in your hand, "
                         "not on the line)."),
        "unseen_of": _("%(n)s unseen with %(number)s"),
        "passed_numbers": _("Numbers each player passed on"),
        "nobody_passed": _("Nobody has passed yet."),
        "points_scored": _("%(n)s points scored"),
        "no_tiles": _("no tiles"),
        "winner_is": _("Winner: %(name)s"),
        "final_scores": _("Final scores"),
        "not_saved": _("Your setting could not be saved."),
        "connecting": _("Connecting…"),
        "connected": _("Connected"),
        "reconnecting": _("Connection lost; reconnecting…"),
        "signed_out": _("You are signed out. Sign in again to play."),
        "no_table": _("This table does not exist or is not open to you."),
        "banned": _("Your account has been suspended: you cannot play for now."),
        "your_turn": _("Your turn"),
        "turn_of": _("%(name)s to play"),
        "waiting": _("Waiting for players"),
        "round": _("Round %(n)s"),
        "match": _("Match %(n)s"),
        "pass": _("Pass"),
        "which_end": _("Which end for %(tile)s?"),
        "end": _("end %(end)s"),
        "cancel": _("Cancel"),
        "your_hand": _("Your hand"),
        "line": _("The line"),
        "empty_line": _("No tile played yet."),
        "tiles": _("%(n)s tiles"),
        "tile_one": _("%(n)s tile"),
        "away": _("away"),
        "online": _("connected"),
        "bot": _("bot"),
        "you": _("you"),
        "empty_seat": _("free seat"),
        "team": _("team %(n)s"),
        "scores": _("Scores"),
        "target": _("Target: %(n)s points"),
        "games": _("Games won"),
        "boneyard": _("Boneyard: %(n)s tiles"),
        "paused_by": _("Paused by %(name)s"),
        "paused": _("Paused"),
        "result": _("Round over"),
        "revealed": _("Hands at the end"),
        "pips": _("%(n)s pips"),
        "match_over": _("The match is over."),
        "start": _("Start the match"),
        "start_with_bots": _("Start with bots"),
        "start_with_bots_help": _("Bots at the table's level take every free seat."),
        "waiting_fill": _("Waiting for players… bots fill the free seats in %(n)s s"),
        "filling": _("Bots are taking the free seats…"),
        "pause": _("Pause"),
        "resume": _("Resume"),
        "next_round": _("Deal the next round"),
        "new_match": _("Start a new match"),
        "add_bot": _("Add a bot"),
        "remove_bot": _("Remove bot"),
        "host_controls": _("Host"),
        "invited": _("You are invited to table %(code)s."),
        "open": _("Open"),
        "played": _("%(name)s played %(tile)s"),
        "passed": _("%(name)s passed"),
        "by_table": _("(played by the table)"),
        "time_left": _("Time left"),
        "passed_on": _("%(name)s passed on %(numbers)s"),
        "passed_by_table": _("(passed by the table)"),
        "drew": _("%(name)s drew %(n)s tiles"),
        "drew_one": _("%(name)s drew a tile"),
        "you_drew": _("You drew %(n)s tiles"),
        "you_drew_one": _("You drew a tile"),
        "drew_round": _("drew %(n)s this round"),
        "drew_round_one": _("drew 1 this round"),
        "last_move": _("Last move"),
        "no_moves": _("No move yet."),
        "paused_wait": _("The table is paused: wait for the host to resume."),
        "watching_off": _("The host has turned watching off."),
        "replay": _("Replay this match move by move"),
        "you_watch": _("You are watching"),
        "watcher_one": _("%(n)s person watching"),
        "watchers": _("%(n)s people watching"),
    }


@login_required
@require_POST
def join(request, code: str):
    table = _table_or_404(code)
    _remember(request, table)
    try:
        services.join_table(user=request.user, table_id=table.pk,
                            code=request.POST.get("code") or None)
    except ServiceError as err:
        messages.error(request, err.message)
    return redirect("tables:table", code=table.code)


@login_required
@require_POST
def leave(request, code: str):
    table = _table_or_404(code)
    try:
        outcome = services.leave_table(user=request.user, table_id=table.pk)
    except ServiceError as err:
        messages.error(request, err.message)
    else:
        if any(e.get("action") == "leaving" for e in outcome.events):
            messages.success(request, _("You left the match: a bot plays your hand until this "
                                        "round ends, then your seat is free."))
        elif table.state == Table.State.PLAYING:
            messages.success(request, _("You left the match."))
    return redirect("tables:table", code=table.code)


@login_required
@require_POST
def invite(request, code: str):
    table = _table_or_404(code)
    form = InviteForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Enter a display name."))
    else:
        name = form.cleaned_data["display_name"]
        try:
            services.invite(user=request.user, table_id=table.pk, display_name=name)
        except ServiceError as err:
            messages.error(request, err.message)
        else:
            messages.success(request, _("%(name)s is invited.") % {"name": name})
    return redirect("tables:table", code=table.code)


@login_required
@require_POST
def rename(request, code: str):
    table = _table_or_404(code)
    try:
        services.rename_table(user=request.user, table_id=table.pk,
                              name=request.POST.get("name", ""))
    except ServiceError as err:
        messages.error(request, err.message)
    else:
        messages.success(request, _("The table's name is saved."))
    return redirect("tables:table", code=table.code)


@login_required
@require_POST
def watching(request, code: str):
    """The host lets people watch, or not (``allowed``: 1 or 0)."""
    table = _table_or_404(code)
    allowed = request.POST.get("allowed") == "1"
    try:
        services.set_watching(user=request.user, table_id=table.pk, allowed=allowed)
    except ServiceError as err:
        messages.error(request, err.message)
    else:
        messages.success(request, _("People may watch this table now.") if allowed
                         else _("Watching is off: only the players see this table."))
    return redirect("tables:table", code=table.code)


@login_required
@require_POST
def preferences(request, code: str):
    """The table page's options, saved on the person's profile: the switches that change what
    the table does for them (auto-pass, play automatically) act at once where they apply;
    the others (learning mode, tile size, speed, sounds, arranging tiles) only change the page."""
    from django.core.exceptions import ValidationError

    table = _table_or_404(code)

    def flag(name):
        value = request.POST.get(name)
        return None if value is None else value in ("1", "true", "on")

    try:
        set_table_options(user=request.user, arrange_tiles=flag("arrange_tiles"),
                          sounds=flag("sounds"), tile_size=request.POST.get("tile_size"),
                          game_speed=request.POST.get("game_speed"))
    except ValidationError as err:
        return JsonResponse({"ok": False, "message": " ".join(err.messages)}, status=400)
    try:
        services.set_preferences(user=request.user, table_id=table.pk,
                                 auto_pass=flag("auto_pass"), learning_mode=flag("learning_mode"),
                                 auto_play=flag("auto_play"))
    except ServiceError as err:
        if err.code not in ("not_started", "closed", "stale", "paused"):
            return JsonResponse({"ok": False, "message": err.message}, status=400)
    request.user.profile.refresh_from_db()
    return JsonResponse({"ok": True, **table_options(request.user.profile)})


@login_required
@require_GET
def record(request, code: str):
    table = _table_or_404(code)
    number = request.GET.get("match")
    if number is not None and not number.isdigit():
        raise Http404
    # A finished match anyone may replay (its players, everyone at a public table) may be
    # downloaded by them too: the replay page shows every hand already.
    if not (selectors.may_download(table, request.user) or (
            number is not None and selectors.replayable_match(table, int(number), request.user))):
        raise Http404(_("Only the host and the players may download this record."))
    data = selectors.finished_record(table, int(number) if number else None)
    if data is None:
        raise Http404(_("No match has been played at this table yet."))
    response = JsonResponse(data, json_dumps_params={"indent": 1})
    name = f"domino-{table.code}-match-{number or 'current'}.json"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response




@require_GET
def replay(request, code: str, number: int):
    """A finished match, move by move: its players may open it, and anyone a public table's."""
    table = _table_or_404(code)
    match = selectors.replayable_match(table, number, request.user)
    if match is None:
        raise Http404(_("No finished match of yours has that number here."))
    data = selectors.replay_of(table, match)
    return render(request, "tables/replay.html", {
        "table": table, "match": match, "replay": data,
        "strings": _replay_strings(), "preset_name": table.get_preset_display(),
    })


def _replay_strings() -> dict:
    """Every word replay.js shows, in the page's language."""
    strings = _js_strings()
    keep = ("numbers", "end_label", "play_at", "spinner_arm", "line", "empty_line", "round",
            "pips", "tiles", "tile_one", "no_tiles", "bot", "team", "scores", "games_won",
            "boneyard", "played", "passed", "passed_on", "drew", "drew_one", "winner_is",
            "final_scores")
    return {**{k: strings[k] for k in keep},
            "start": _("Dealt: nobody has played yet."),
            "step": _("Move %(n)s of %(total)s"),
            "by_table": _("played by the table for %(name)s (time ran out)"),
            "by_table_pass": _("the table passed for %(name)s"),
            "by_standin": _("played by a bot for %(name)s"),
            "round_of": _("Round %(n)s of %(total)s"),
            "round_over": _("Round over"),
            "nobody_scores": _("nobody scores"),
            "scored": _("%(name)s score %(n)s points"),
            "hands": _("Hands")}
