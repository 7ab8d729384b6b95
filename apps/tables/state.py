"""A table's state at one version: built once after each change, composed for each person.

Where the truth is, and what is derived from it:

- **Truth**: the deals and the moves (:class:`~apps.tables.models.Round`,
  :class:`~apps.tables.models.Move`), the seats and the table's row with its ``version``.
- **Derived in the same transaction** as each change: the engine's position after the last
  move (``Match.position``), so no move or read replays a round; the change's events
  (:class:`~apps.tables.models.TableEvent`); and the **snapshot** of the new version, built here
  by :func:`build` while the service still holds the table's row lock, so it is exactly that
  version.
- **Kept after the commit**: the snapshot is stored in Redis under the table's id
  (``apps.core.snapshots``), replaced only by a higher version, and the table's doorbell
  rings with the version number. Every socket, in every web process, then composes its own
  frame from the snapshot with :func:`compose`; no socket reads the database or replays
  anything for a change.

A snapshot needs no invalidation: a version names it. When the one in Redis is older than the
version a doorbell or the database names (Redis restarted and lost it, or a writer died between
its commit and the store), the reader builds it again from the database (:func:`build_latest`,
from ``Match.position``) and stores it.

Hidden tiles: a snapshot holds every seat's hand and legal moves in ``private``, and people's
mutes in ``extras``. It lives only on the server (process memory and Redis); :func:`compose`
copies into a frame only the private part of the seat the person holds, and the public view
otherwise. Everything else in a snapshot is public, in every language the site speaks
(``i18n``), so composing needs no translation and no query.

Other apps add their part without the table app knowing them (:func:`register_part`): the
moderation app adds the chat and people's mutes.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.rules.engine import Match as EngineMatch
from apps.rules.view import private_part, public_view

from . import game
from .models import PRESET_CHOICES, Connection, Seat, Table, TableEvent
from .names import seat_names

#: Versions of events a snapshot carries: a socket further behind gets the state alone.
LOG_LENGTH = 20
PARTNER_PRESETS = ("partners", "partners-66", "pairs-series", "tranca")


@dataclass(frozen=True)
class Part:
    """Another app's part of the state: ``build(table, seats)`` adds JSON-ready data to the
    snapshot (under ``name``); ``compose(data, state, viewer)`` puts the person's share of it
    into their state. The part is built again only at a version whose events include one of
    ``refresh_on`` (or when the previous version's snapshot is not at hand); otherwise the
    previous version's part is kept."""

    name: str
    build: Callable[[Table, list[Seat]], dict]
    compose: Callable[[dict, dict, Viewer], None]
    refresh_on: frozenset[str] = frozenset()


_parts: dict[str, Part] = {}


def register_part(part: Part) -> None:
    _parts[part.name] = part


@dataclass(frozen=True)
class Viewer:
    """Who a frame is for: a person (or nobody), in a language; staff observers see the
    public view. ``hidden``: the people whose chat lines this person does not want to see
    (``hooks.hidden_from``), read by their socket and page; a seated person's are in the
    snapshot too, a watcher's only here (a watcher coming rebuilds no part)."""

    user_id: int | None
    language: str
    observer: bool = False
    hidden: frozenset[int] = frozenset()


# -- words --------------------------------------------------------------------------------------

def number_words() -> list[str]:
    return [_("blank"), _("one"), _("two"), _("three"), _("four"), _("five"), _("six")]


def display_name(user) -> str:
    profile = getattr(user, "profile", None)
    return getattr(profile, "display_name", "") or user.get_username()


def avatar_of(user) -> str:
    profile = getattr(user, "profile", None)
    return getattr(profile, "avatar", "") or ""


def passed_words(numbers: list[int]) -> str:
    words = number_words()
    names = [words[v] for v in numbers]
    if len(names) == 1:
        return _("passed on %(a)s") % {"a": names[0]}
    return _("passed on %(list)s and %(last)s") % {"list": ", ".join(names[:-1]),
                                                    "last": names[-1]}


def side_name(rules, side: int | None, seats: list[dict]) -> str:
    if side is None:
        return ""
    if rules.partners:
        return _("%(a)s and %(b)s") % {"a": seats[side]["name"], "b": seats[side + 2]["name"]}
    return seats[side]["name"]


def describe_result(engine: EngineMatch, k: int, seats: list[dict]) -> str:
    """Who won the round and why, in one sentence of the active language."""
    rnd = engine.rounds[k]
    res = rnd.result
    rules = engine.rules
    winner = side_name(rules, res.winner, seats)
    points = ngettext("%(n)s point", "%(n)s points", res.points) % {"n": res.points}
    if res.reason == "domino":
        return _("%(name)s played their last tile: %(winner)s score %(points)s.") % {
            "name": seats[rnd.last_placer]["name"], "winner": winner, "points": points}
    if rules.partners:
        pips = [res.pips[0] + res.pips[2], res.pips[1] + res.pips[3]]
    else:
        pips = list(res.pips)
    if not res.tie:
        return _("The round is blocked: %(winner)s hold the fewest pips (%(pips)s) and score "
                 "%(points)s.") % {"winner": winner, "pips": pips[res.winner], "points": points}
    low = min(pips)
    rule = rules.blocked_tie
    if rule == "closer_wins":
        why = _("the team that placed the last tile wins the tie")
    elif rule == "closer_loses":
        why = _("the side that placed the last tile loses the tie")
    elif rule == "opener_loses":
        why = _("the pair that opened the round loses the tie")
    elif rule == "replay":
        return _("The round is blocked with %(pips)s pips on each side: nobody scores and the "
                 "same player opens again.") % {"pips": low}
    else:
        return _("The round is blocked with a tie at %(pips)s pips: nobody scores.") % {
            "pips": low}
    return _("The round is blocked with %(pips)s pips on each side: %(why)s, so %(winner)s "
             "score %(points)s.") % {"pips": low, "why": why, "winner": winner,
                                     "points": points}


def closed_sentence(table: Table) -> str:
    if table.state != Table.State.CLOSED:
        return ""
    reason = table.closed_reason or ""
    if reason.startswith("staff:"):
        return _("Closed by staff: %(reason)s") % {"reason": reason[len("staff:"):].strip()}
    if reason == "empty":
        return _("Closed: nobody was at the table.")
    if reason == "practice_replaced":
        return _("Closed: you opened another practice table.")
    if reason == "practice_expired":
        return _("Closed: a practice table lasts at most %(hours)s hours.") % {
            "hours": _practice_hours()}
    if reason == "adjourned_expired":
        return _("Closed: the adjourned match was not resumed in time; it does not count.")
    if reason == "unfilled":
        return _("Cancelled: the table did not fill in time.")
    if reason == "host_left":
        return _("Cancelled: the player who opened it stood up.")
    return _("This table is closed.")


def _practice_hours() -> str:
    hours = settings.PRACTICE_MAX_AGE_SECONDS / 3600
    return f"{hours:g}"


def _ms(moment) -> int | None:
    return None if moment is None else int(moment.timestamp() * 1000)


def clock_of(table: Table, turn_seconds) -> dict:
    """The turn clock from the server's own deadline, so a reload never restarts it. ``now``
    is added when a frame is composed: it lets the page correct its own clock."""
    left = None
    if table.paused and table.paused_at and table.turn_started_at and turn_seconds:
        left = max(0, int((table.turn_started_at.timestamp() + turn_seconds
                           - table.paused_at.timestamp()) * 1000))
    return {
        "started": _ms(table.turn_started_at),
        "deadline": _ms(table.turn_deadline),
        "turn_seconds": turn_seconds,
        "paused_left_ms": left,
    }


# -- building -----------------------------------------------------------------------------------

def connected_people(seats: list[Seat]) -> set[int]:
    """Who of the seated holds a socket at the table: a seat's ``away_since`` is None exactly
    while its person has one (the presence services keep it so)."""
    return {s.user_id for s in seats if s.user_id is not None and s.away_since is None}


def _seat_dicts(table: Table, seats: list[Seat], connected: set[int]) -> list[dict]:
    partners = table.players == 4 and table.preset in PARTNER_PRESETS
    out = []
    for seat in seats:
        user = seat.user
        out.append({
            "index": seat.index,
            "name": display_name(user) if user else "",
            "avatar": avatar_of(user) if user else ("bot" if seat.is_bot else ""),
            "bot": seat.is_bot,
            "empty": seat.empty,
            "connected": seat.is_bot or (user is not None and user.pk in connected),
            "standin": bool(seat.standin and user is not None),
            # Left during the round: a bot plays the hand out, and the seat frees at its end.
            "leaving": bool(seat.leaving and user is not None),
            "team": seat.index % 2 if partners else None,
            # Turn-based: timeouts in a row this match, a stand-in to the match's end, and
            # a vacation's end (ms) while the table's clock stops for it.
            "timeouts": seat.timeouts,
            "forfeited": bool(seat.forfeited and user is not None),
            "vacation_until": _vacation_until(table, user),
        })
    return out


def _vacation_until(table: Table, user) -> int | None:
    if user is None or not table.turn_based or not table.vacation_allowed:
        return None
    until = getattr(getattr(user, "profile", None), "vacation_until", None)
    return _ms(until) if until is not None and until > timezone.now() else None


def _rematch_of(offer: dict | None) -> dict | None:
    """The rematch offered (seats' people who accepted), without anything server side."""
    if not offer:
        return None
    return {"match": offer.get("match"), "accepted": list(offer.get("accepted", []))}


#: Events after which the watcher count is the previous version's: none of them seats, unseats
#: or reserves anyone, and watchers coming and going have versions of their own
#: (``services._bump_watchers``), so the count is read again only when seats change.
WATCHERS_KEPT_BY = frozenset({"move", "round_over", "round_started", "match_over", "paused",
                              "resumed", "presence"})


def _seated(user_id: int, seats: list[Seat]):
    """The person seated as ``user_id``, from the seats already read, or None: the host and
    the pauser nearly always sit at the table, so the hot path reads no more users."""
    return next((s.user for s in seats if s.user_id == user_id and s.user is not None), None)


def watcher_count(table_id: int) -> int:
    """People holding a socket at the table without a seat in it, nor one reserved for them
    (staff observers hold none)."""
    seats = Seat.objects.filter(table_id=table_id)
    return (Connection.objects.filter(table_id=table_id)
            .exclude(user_id__in=seats.filter(user__isnull=False).values("user_id"))
            .exclude(user_id__in=seats.filter(reserved_for__isnull=False)
                     .values("reserved_for_id"))
            .values("user_id").distinct().count())


def build(table: Table, *, engine: EngineMatch | None, match=None,
          seats: list[Seat] | None = None, previous: dict | None = None,
          events: list[dict] | None = None) -> dict:
    """The snapshot of ``table`` at ``table.version``: public parts, every seat's private part,
    the person-specific data other apps add, and the words in every language.

    Called by the services under the table's row lock (so it is exactly that version), with
    the version's ``events`` and, when at hand, the ``previous`` version's snapshot: the event
    log and the other apps' parts carry on from it instead of being read again. Called by
    :func:`build_latest` when a stored snapshot is missing.
    """
    if seats is None:
        seats = list(Seat.objects.filter(table=table).select_related("user__profile")
                     .order_by("index"))
    connected = connected_people(seats)
    if previous is not None and (previous["version"] != table.version - 1 or events is None
                                 or previous["table"]["code"] != table.code):
        previous = None  # not the version just before this one: nothing carries on
    if match is None and table.state != Table.State.WAITING:
        match = table.current_match
    if engine is None and match is not None:
        engine = game.restore(match)
    rules = game.rules_for(table)
    seat_list = _seat_dicts(table, seats, connected)
    kinds = {e.get("kind") for e in events or ()}
    if previous is not None and kinds <= WATCHERS_KEPT_BY:
        watchers = previous["watchers"]
    else:
        watchers = watcher_count(table.pk)
    snap: dict = {
        "version": table.version,
        "table": {
            "id": table.pk, "code": table.code, "name": table.name, "preset": table.preset,
            "players": table.players, "target": rules.target, "options": rules.options(),
            "public": table.public, "state": table.state, "paused": table.paused,
            "paused_by": (display_name(_seated(table.paused_by_id, seats) or table.paused_by)
                          if table.paused_by_id else None),
            "host": display_name(_seated(table.host_id, seats) or table.host),
            "allow_bots": table.allow_bots,
            # Quick play: when bots take the free seats (ms since the epoch, None once the
            # table started), and whether bots took seats at the start (the league's half).
            "quick": table.quick, "fill_at": _ms(table.fill_at),
            "bot_filled": table.bot_filled,
            "watchers_allowed": table.watchers_allowed,
            # Turn-based tables (docs/turn-based.md): the time per move, and the host's
            # number of timeouts in a row before a stand-in takes the seat.
            "pace": table.pace, "move_seconds": table.move_seconds,
            "timeouts_to_standin": table.timeouts_to_standin,
            "vacation_allowed": table.vacation_allowed,
            "adjourned_at": _ms(table.adjourned_at),
            "rematch": _rematch_of(table.rematch),
        },
        "watchers": watchers,
        "seats": seat_list,
        "clock": clock_of(table, rules.turn_seconds),
        "host_id": table.host_id,
        # Server side only, below: who sits where, and each seat's hand.
        "seat_of": {str(s.user_id): s.index for s in seats if s.user_id is not None},
        "reserved": [s.reserved_for_id for s in seats if s.reserved_for_id is not None],
        "match": None, "view": None, "private": {}, "result": None,
    }
    if match is not None and engine is not None:
        snap["match"] = {
            "number": match.number, "scores": engine.scores(), "games": list(engine.games),
            "over": engine.over, "winner": engine.winner, "round": len(engine.rounds) - 1,
            "best_of": engine.rules.best_of,
        }
        if engine.rounds:
            snap["view"] = public_view(engine)
            snap["private"] = {str(i): private_part(engine, i) for i in range(table.players)}
            if table.state in (Table.State.CLOSED, Table.State.ADJOURNED):
                for part in snap["private"].values():
                    part["legal"] = []  # nothing is played at a closed or adjourned table
            last = engine.rounds[-1]
            if last.result is not None:
                res = last.result
                snap["result"] = {"reason": res.reason, "winner": res.winner, "tie": res.tie,
                                  "pips": list(res.pips), "points": res.points}
    snap["i18n"] = _words(table, engine, seat_list, snap)
    snap["extras"] = {
        name: (previous["extras"][name] if previous is not None and name in previous["extras"]
               and not kinds & part.refresh_on else part.build(table, seats))
        for name, part in _parts.items()}
    if previous is not None:
        snap["log"] = (previous["log"] + [[table.version, events]])[-LOG_LENGTH:]
    else:
        snap["log"] = [[e.version, e.events] for e in reversed(
            TableEvent.objects.filter(table=table).order_by("-version")[:LOG_LENGTH])]
    return snap


def with_watchers(table: Table, previous: dict | None, events: list[dict],
                  count: int) -> dict | None:
    """The snapshot of a version whose only change is the watcher count: the previous
    version's, with the count, the version and the log moved on; None when ``previous`` is not
    the version just before (then the caller builds it in full).

    Watchers change nothing else a snapshot holds (seats, clock, game, words), and other apps'
    parts are rebuilt only for their own event kinds, so copying is exact; it saves the engine
    restore, the seat views and the words in every language that :func:`build` spends on
    each version (see ``tests/tables/test_watching.py`` for the measured difference)."""
    if previous is None or previous["version"] != table.version - 1 \
            or previous["table"]["code"] != table.code:
        return None
    kinds = {e.get("kind") for e in events}
    snap = dict(previous, version=table.version, watchers=count)
    snap["log"] = (previous["log"] + [[table.version, events]])[-LOG_LENGTH:]
    snap["extras"] = {
        name: (previous["extras"][name] if name in previous["extras"]
               and not kinds & part.refresh_on else part.build(table, _seats_of(table)))
        for name, part in _parts.items()}
    return snap


def _seats_of(table: Table) -> list[Seat]:
    return list(Seat.objects.filter(table=table).select_related("user__profile")
                .order_by("index"))


def _words(table: Table, engine: EngineMatch | None, seats: list[dict], snap: dict) -> dict:
    """Every sentence of the state, in every language of the site."""
    names = tuple(s["name"] for s in seats)
    bots = tuple(s["bot"] for s in seats)
    passed = tuple((seat, tuple(nums)) for seat, nums in snap["view"]["passed_on"].items()) \
        if snap["view"] is not None else ()
    closed = table.state == Table.State.CLOSED
    out = {}
    for lang, _name in settings.LANGUAGES:
        # Most versions are moves: their words (names, the game, the passes) are the last
        # version's, so they come from a cache; only a result or a closing is worded anew.
        words = dict(_move_words(lang, table.preset, names, bots, passed))
        if closed or snap["result"] is not None:
            with translation.override(lang):
                words["closed_reason"] = closed_sentence(table)
                if snap["result"] is not None:
                    named = [dict(s, name=name)
                             for s, name in zip(seats, words["seat_names"], strict=True)]
                    words["sentence"] = describe_result(engine, len(engine.rounds) - 1, named)
        out[lang] = words
    return out


@functools.lru_cache(maxsize=4096)
def _move_words(lang: str, preset: str, names: tuple, bots: tuple, passed: tuple) -> dict:
    with translation.override(lang):
        return {
            "preset_name": str(dict(PRESET_CHOICES).get(preset, preset)),
            "closed_reason": "",
            "seat_names": seat_names(list(names), list(bots)),
            "passed": {seat: _passed_in(lang, nums) for seat, nums in passed},
            "sentence": None,
        }


@functools.lru_cache(maxsize=1024)
def _passed_in(lang: str, nums: tuple) -> str:
    # Called inside ``translation.override(lang)``. Every pass changes a seat's numbers and so
    # misses the cache above, which then worded every seat's passes again (eight lookups in
    # the catalogue each); a seat's passes are few and repeat across tables.
    return passed_words(list(nums))


def build_latest(table_id: int) -> dict | None:
    """The snapshot of the table as the database has it now, for a reader that found none.

    The version is read first, so the content is of that version or newer, never older; a newer
    snapshot replaces it as soon as its own doorbell is answered.
    """
    table = Table.objects.select_related("host__profile", "paused_by__profile").filter(
        pk=table_id).first()
    if table is None:
        return None
    return build(table, engine=None)


# -- composing ----------------------------------------------------------------------------------

def _words_in(snap: dict, language: str) -> dict:
    words = snap["i18n"]
    return words.get(language) or words.get(settings.LANGUAGE_CODE) or next(iter(words.values()))


def compose(snap: dict, viewer: Viewer) -> dict:
    """One person's state from a snapshot: no query, no translation, no hidden tile but
    their own."""
    words = _words_in(snap, viewer.language)
    seat = None if viewer.observer or viewer.user_id is None else snap["seat_of"].get(
        str(viewer.user_id))
    table = dict(snap["table"], preset_name=words["preset_name"],
                 closed_reason=words["closed_reason"])
    seats = [dict(s, name=name) for s, name in zip(snap["seats"], words["seat_names"],
                                                   strict=True)]
    you: dict = {"seat": seat, "host": viewer.user_id is not None
                 and snap["host_id"] == viewer.user_id}
    state: dict = {
        "version": snap["version"], "table": table, "seats": seats, "you": you,
        "match": snap["match"], "view": None, "result": None,
        "clock": dict(snap["clock"], now=int(time.time() * 1000)),
    }
    if viewer.observer:
        you["observer"] = True
    # A person at the page without a seat (or one reserved for them) is watching.
    you["watching"] = (seat is None and not viewer.observer and viewer.user_id is not None
                       and viewer.user_id not in snap.get("reserved", ()))
    state["watchers"] = snap.get("watchers", 0)
    you["can_chat"] = seat is not None and table["state"] != Table.State.CLOSED
    if snap["view"] is not None:
        view = snap["view"]
        if seat is not None:
            view = dict(view, **snap["private"][str(seat)])
        state["view"] = view
        state["passed"] = words["passed"]
    if snap["result"] is not None:
        state["result"] = dict(snap["result"], sentence=words["sentence"])
    for name, part in _parts.items():
        part.compose(snap["extras"].get(name, {}), state, viewer)
    return state


def events_since(snap: dict, version: int) -> list[dict]:
    """Every event after ``version`` up to the snapshot's, in order; empty when the snapshot's
    log does not reach back that far (the state alone tells the whole story)."""
    log = snap["log"]
    if version < 0 or not log or log[0][0] > version + 1:
        return []
    return [event for ver, events in log if ver > version for event in events]
