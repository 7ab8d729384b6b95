"""The kinds of notification: each is one declaration (:func:`declare`), with its words in
every language (gettext: rendered in the reader's language when shown or sent), the channels
it goes by unless the person chose otherwise, its link, whether its mails are gathered, and,
for what a table's version says, the event it answers and who hears it.

A new kind is one ``declare(Kind(...))`` below, plus, when its source is not a table's event,
the one receiver that hears its source (``sources.py``). ``docs/notifications.md`` lists them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from django.urls import reverse
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from .models import Channel

SITE, EMAIL, PUSH = Channel.SITE.value, Channel.EMAIL.value, Channel.PUSH.value
CHANNELS = (SITE, EMAIL, PUSH)
CHANNEL_LABELS = {SITE: _("On the site"), EMAIL: _("By e-mail"), PUSH: _("On this device")}


class Seated:
    """Who sits at a table, as a table's hook sees it: ``seats`` is [(index, user id)] of the
    people (not bots) seated; ``connected``, the ids of people with its page open, is read
    only when a kind asks (``connected`` may be a set or a function giving one)."""

    def __init__(self, seats: list[tuple[int, int]], connected=None) -> None:
        self.seats = seats
        self._connected = connected

    @functools.cached_property
    def connected(self) -> frozenset[int]:
        found = self._connected() if callable(self._connected) else self._connected
        return frozenset(found or ())

    def user_at(self, index) -> int | None:
        return next((u for i, u in self.seats if i == index), None)


#: Who hears a table's event: (the event, who sits) -> user ids.
Recipients = Callable[[dict, Seated], list[int]]


@dataclass(frozen=True)
class Kind:
    name: str
    #: The preferences table's row.
    label: Promise
    #: Title and body, ``%(name)s`` placeholders filled from the notification's data.
    title: Promise
    body: Promise
    #: The path the notification opens, from its data.
    link: Callable[[dict], str]
    #: The channels it goes by when the person has not chosen (the site's bell among them).
    channels: frozenset[str] = field(default_factory=lambda: frozenset({SITE}))
    #: Its mails wait and go together: at most one per person per ``NOTIFY_GATHER_SECONDS``,
    #: listing every one still waiting.
    gathered: bool = False
    #: A table's event (``docs/protocol.md``) that makes it, and who hears it.
    table_event: str | None = None
    recipients: Recipients | None = None
    #: Its key repeats per table version (a turn comes back); else once per table and match.
    per_version: bool = True

    def words(self, data: dict) -> tuple[str, str]:
        """Title and body in the active language."""
        return _fill(self.title, data), _fill(self.body, data)


def _fill(text: Promise, data: dict) -> str:
    try:
        return str(text) % data
    except (KeyError, ValueError, TypeError):
        return str(text)


KINDS: dict[str, Kind] = {}
#: A table event's name -> the kinds it makes.
TABLE_EVENTS: dict[str, list[Kind]] = {}


def declare(kind: Kind) -> Kind:
    KINDS[kind.name] = kind
    if kind.table_event is not None:
        TABLE_EVENTS.setdefault(kind.table_event, []).append(kind)
    return kind


def get(name: str) -> Kind | None:
    return KINDS.get(name)


# -- links and recipients ------------------------------------------------------------------------

def table_link(data: dict) -> str:
    return reverse("tables:table", args=[data["code"]])


def replay_link(data: dict) -> str:
    return reverse("tables:replay", args=[data["code"], data["number"]])


def tournament_link(data: dict) -> str:
    return reverse("tournaments:detail", args=[data["tournament_id"]])


def friends_link(data: dict) -> str:
    return reverse("friends:page")


def seat_in_event(event: dict, seated: Seated) -> list[int]:
    """The person in the event's ``seat`` (``turn``: whose turn it is)."""
    user = seated.user_at(event.get("seat"))
    return [user] if user is not None else []


def everyone_seated(event: dict, seated: Seated) -> list[int]:
    return [u for _i, u in seated.seats]


def the_others(event: dict, seated: Seated) -> list[int]:
    """Everyone seated but the one who acted (the event's ``seat``, or ``by`` as a seat)."""
    actor = event.get("seat", event.get("by"))
    return [u for i, u in seated.seats if i != actor]


def those_away(event: dict, seated: Seated) -> list[int]:
    """The seated people without the table's page open: those at the table see it happen."""
    return [u for _i, u in seated.seats if u not in seated.connected]


# -- the kinds -------------------------------------------------------------------------------------
# Defaults (the issue's): push and the bell for your turn and invitations, e-mail for your turn
# and invitations only; the rest on the bell, and on this device where waiting costs a game.

ALL = frozenset(CHANNELS)
SITE_AND_PUSH = frozenset({SITE, PUSH})

TURN = declare(Kind(
    "turn", label=_("Your turn at a turn-based table"),
    title=_("Your turn at %(table)s"),
    body=_("%(table)s is waiting for your move."),
    link=table_link, channels=ALL, gathered=True,
    table_event="turn", recipients=seat_in_event))

declare(Kind(
    "invitation", label=_("An invitation to a table"),
    title=_("%(name)s invites you to %(table)s"),
    body=_("Open the table to take a seat."),
    link=table_link, channels=ALL))

declare(Kind(
    "rematch_offered", label=_("A rematch offered"),
    title=_("A rematch at %(table)s"),
    body=_("Your opponents offer to play %(table)s again."),
    link=table_link, channels=SITE_AND_PUSH,
    table_event="rematch_offered", recipients=the_others))

declare(Kind(
    "resumed", label=_("An adjourned match resumed"),
    title=_("The match at %(table)s goes on"),
    body=_("The adjourned match at %(table)s has resumed."),
    link=table_link, table_event="resumed", recipients=those_away))

declare(Kind(
    "match_over", label=_("A match of yours over"),
    title=_("The match at %(table)s is over"),
    body=_("See how it went in the replay."),
    link=replay_link, table_event="match_over", recipients=everyone_seated,
    per_version=False))

declare(Kind(
    "tournament_soon", label=_("A tournament you entered starts in 5 minutes"),
    title=_("%(tournament)s starts in %(minutes)s minutes"),
    body=_("Be ready: your table opens at the start."),
    link=tournament_link, channels=SITE_AND_PUSH))

declare(Kind(
    "tournament_table", label=_("Your tournament table is ready"),
    title=_("Your table in %(tournament)s is ready"),
    body=_("Take your seat at %(table)s now: a team that does not come loses the game."),
    link=table_link, channels=SITE_AND_PUSH))

declare(Kind(
    "partner_invitation", label=_("A partner invitation to a tournament"),
    title=_("%(name)s invites you to play %(tournament)s as partners"),
    body=_("Accept or decline on the tournament's page."),
    link=tournament_link, channels=ALL))

declare(Kind(
    "friend_request", label=_("A friend request"),
    title=_("%(name)s wants to be your friend"),
    body=_("Accept or decline on your friends page."),
    link=friends_link))

declare(Kind(
    "review_ready", label=_("A review of yours ready"),
    title=_("The review of your match at %(table)s is ready"),
    body=_("See every move judged on the replay."),
    link=replay_link))
