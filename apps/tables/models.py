"""Tables, seats, matches, rounds and moves: what the club keeps of every game.

The moves are the truth: replaying a round's deal and moves through the rules engine
(``apps.tables.game.load``) gives its state. What a move must not wait for is kept beside them
and written by the same service call, in the same transaction, as the move: the engine's
position after the last move (:attr:`Match.position`), the scores on :class:`Match`, the results
on :class:`Round`. ``tests/tables/test_positions.py`` rebuilds every table from its moves and
compares.
"""

from __future__ import annotations

import secrets
from datetime import UTC

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from apps.rules.presets import PRESETS

from .pace import LIVE, PACE_CHOICES, TIMEOUTS_DEFAULT

#: Invite codes are read aloud: no 0/O, no 1/I/L.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6

#: The games by name, in every menu that chooses one and wherever a table is named. A name says
#: what sets its game apart from the others: both partners games give the first round to the
#: holder of the 6-6, so theirs say what that player may open with (shared/specs/rules.md).
PRESET_CHOICES = [
    ("partners", _("Partners, open with any tile")),
    ("partners-66", _("Partners, open with the 6-6")),
    ("draw", _("Draw")),
    ("block", _("Block")),
    ("all-fives", _("All fives")),
    ("tranca", _("Tranca")),
    ("pairs-series", _("Pairs series")),
]
assert [p for p, _label in PRESET_CHOICES] == list(PRESETS)

#: One line under every game menu (``{% preset_about %}``): who plays, who opens, the tie rule
#: or scoring that is the game's own, and the default target, as rules.md states them.
PRESET_DESCRIPTIONS = {
    "partners": _("Two pairs, no drawing. Whoever holds the 6-6 opens the first round, with any "
                  "tile; a blocked round tied on pips goes to the pair that placed the last tile. "
                  "First to 100."),
    "partners-66": _("Two pairs, no drawing. Whoever holds the 6-6 must open the first round with "
                     "it; a blocked round tied on pips is lost by the pair that placed the last "
                     "tile. First to 50."),
    "draw": _("2 to 4 players, each on their own. Cannot play? Draw from the boneyard until a "
              "tile fits. First to 100 (61 with 3 or 4)."),
    "block": _("2 to 4 players, each on their own. Nobody draws: when you cannot play, you pass. "
               "First to 100 (61 with 3 or 4)."),
    "all-fives": _("2 to 4 players, each on their own, drawing. When the open ends add up to a "
                   "multiple of 5, that sum scores at once. First to 150."),
    "tranca": _("2 to 4 players (four play in pairs), drawing. The highest double opens; the "
                "winner of a blocked round takes every pip left, their own included. First to "
                "100."),
    "pairs-series": _("Two pairs, no drawing, a random seat opens. The winning pair scores every "
                      "pip left, its own included. Games to 300, best of 1, 3 or 5."),
}
assert list(PRESET_DESCRIPTIONS) == list(PRESETS)


def preset_choices() -> list[tuple[str, str]]:
    """The model field's choices: a callable, so that renaming a game needs no migration."""
    return PRESET_CHOICES

BOT_LEVELS = [("easy", _("Easy")), ("medium", _("Medium")), ("expert", _("Expert")),
              ("master", _("Master"))]


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


class Table(models.Model):
    class State(models.TextChoices):
        WAITING = "waiting", _("Waiting for players")
        PLAYING = "playing", _("Playing")
        #: The host adjourned the match: closed for play, its match, seats and scores kept
        #: until the host resumes it (or ``pace.ADJOURNED_DAYS`` pass).
        ADJOURNED = "adjourned", _("Adjourned")
        CLOSED = "closed", _("Closed")

    code = models.CharField(max_length=12, unique=True, default=new_code)
    name = models.CharField(_("name"), max_length=40, blank=True)
    host = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                             related_name="hosted_tables")
    preset = models.CharField(max_length=20, choices=preset_choices)
    #: The host's rule options (target, hand_size, best_of, tie, turn_seconds).
    options = models.JSONField(default=dict, blank=True)
    players = models.PositiveSmallIntegerField(default=4)
    public = models.BooleanField(_("listed in the lobby"), default=False)
    allow_bots = models.BooleanField(_("bots may fill seats"), default=False)
    bot_level = models.CharField(max_length=10, choices=BOT_LEVELS, default="medium")
    bot_think_ms = models.PositiveIntegerField(default=1000)
    state = models.CharField(max_length=10, choices=State.choices, default=State.WAITING)
    paused = models.BooleanField(default=False)
    paused_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                  on_delete=models.SET_NULL, related_name="+")
    hidden = models.BooleanField(_("hidden from the lobby"), default=False)
    #: Practice against bots (seed 002/003 "contra la máquina"): never listed, counts for
    #: nothing, deleted when it ends or its guest goes.
    practice = models.BooleanField(_("practice"), default=False)
    #: Opened by quick play ("Online"): public, filled by bots at ``fill_at`` if people are few.
    quick = models.BooleanField(_("quick play"), default=False)
    #: Bots took free seats at the start (quick play's wait, or the host's "start with bots"):
    #: the league counts such tables at half.
    bot_filled = models.BooleanField(_("filled with bots"), default=False)
    fill_at = models.DateTimeField(null=True, blank=True, db_index=True)
    watchers_allowed = models.BooleanField(_("people may watch"), default=True)
    #: Where a practice table was opened from, for the per-address limit.
    opened_from = models.GenericIPAddressField(null=True, blank=True)
    #: Seconds the result stays on screen before the next round is dealt by itself.
    next_round_seconds = models.PositiveIntegerField(default=10)
    # The turn clock. ``turn_deadline`` is when the table acts for the seat to play (a bot's
    # think time, a player's time running out, an absent player's grace, or the next deal).
    turn_started_at = models.DateTimeField(null=True, blank=True)
    turn_deadline = models.DateTimeField(null=True, blank=True, db_index=True)
    paused_at = models.DateTimeField(null=True, blank=True)
    #: "live" (seed 001's presence rules) or "turn": turn-based, each person's move has
    #: ``move_seconds`` and nobody's absence pauses, empties or stands in (apps/tables/pace.py).
    pace = models.CharField(_("pace"), max_length=4, choices=PACE_CHOICES, default=LIVE)
    move_seconds = models.PositiveIntegerField(null=True, blank=True)
    #: Timeouts in a row in one match after which a stand-in takes the seat to its end.
    timeouts_to_standin = models.PositiveSmallIntegerField(default=TIMEOUTS_DEFAULT)
    vacation_allowed = models.BooleanField(_("vacation stops the clock"), default=True)
    #: The deadline is a person's time per move at a turn-based table: an outage extends it.
    person_clock = models.BooleanField(default=False)
    adjourned_at = models.DateTimeField(null=True, blank=True, db_index=True)
    #: The rematch offered when a match ended: {"match": n, "by": user id, "accepted": [ids]}.
    rematch = models.JSONField(null=True, blank=True)
    #: Set while no person holds a socket: the table pauses and closes 2 minutes later.
    empty_since = models.DateTimeField(null=True, blank=True, db_index=True)
    #: Bumped by every change a client must see; every event carries it.
    version = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_reason = models.CharField(max_length=200, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["public", "state", "hidden"]),
            # The beat sweep looks for practice tables past their lifetime or closed every
            # second; practice tables are few and short-lived, so this stays small.
            models.Index(fields=["state", "created_at"], condition=Q(practice=True),
                         name="table_practice_idx"),
            # The sweep's per-second look for live tables nobody opened: without it a scan of
            # every table, and turn-based tables may wait for weeks.
            models.Index(fields=["created_at"], condition=Q(state="waiting",
                                                             empty_since__isnull=True,
                                                             pace=LIVE),
                         name="table_unopened_idx"),
            # An outage moves on the clocks of turn-based tables only (``services.outage``).
            models.Index(fields=["turn_deadline"], condition=Q(person_clock=True),
                         name="table_person_clock_idx"),
        ]

    def __str__(self) -> str:
        return self.name or self.code

    @property
    def turn_based(self) -> bool:
        return self.pace != LIVE

    @property
    def current_match(self) -> Match | None:
        return self.matches.order_by("-number").first()


class Seat(models.Model):
    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="seats")
    index = models.PositiveSmallIntegerField()
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                             on_delete=models.SET_NULL, related_name="seats")
    is_bot = models.BooleanField(default=False)
    bot_level = models.CharField(max_length=10, choices=BOT_LEVELS, blank=True)
    joined_at = models.DateTimeField(null=True, blank=True)
    #: When the person's last socket at the table closed (or since they sat down without one);
    #: None exactly while they hold one: the seat's presence, kept by the presence services.
    away_since = models.DateTimeField(null=True, blank=True, db_index=True)
    #: A bot plays this person's hand for the rest of the round (away too long, or left).
    standin = models.BooleanField(default=False)
    #: The person left during a round: the seat frees when the round ends.
    leaving = models.BooleanField(default=False)
    #: Somebody took this bot's seat during a round: theirs when the round ends.
    reserved_for = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                     on_delete=models.SET_NULL, related_name="+")
    #: The host removed this bot during a round: the seat frees when the round ends.
    bot_leaving = models.BooleanField(default=False)
    #: The table is turn-based (as ``Table.pace``, which never changes): kept here so that the
    #: sweep's per-second look for people away reads an index of live seats only.
    turn_based = models.BooleanField(default=False)
    #: Moves the table made for this person in a row, this match (turn-based tables).
    timeouts = models.PositiveSmallIntegerField(default=0)
    #: Too many timeouts: a stand-in plays this seat until the match ends.
    forfeited = models.BooleanField(default=False)

    class Meta:
        ordering = ["index"]
        indexes = [
            models.Index(fields=["away_since"],
                         condition=Q(turn_based=False, standin=False, user__isnull=False),
                         name="seat_away_live_idx"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["table", "index"], name="seat_unique_index"),
            models.UniqueConstraint(fields=["table", "user"], condition=Q(user__isnull=False),
                                    name="seat_one_per_user"),
        ]

    def __str__(self) -> str:
        return f"{self.table} seat {self.index}"

    @property
    def empty(self) -> bool:
        return self.user_id is None and not self.is_bot

    @property
    def played_by_bot(self) -> bool:
        return self.is_bot or self.standin


class Match(models.Model):
    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="matches")
    number = models.PositiveIntegerField()
    #: Every rule option in force, frozen at the start (``Rules.options()``).
    rules = models.JSONField()
    players = models.PositiveSmallIntegerField()
    scores = models.JSONField(default=list)
    games = models.JSONField(default=list)
    winner = models.PositiveSmallIntegerField(null=True, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    #: The engine's position after the last stored move (``EngineMatch.to_state()``) and the
    #: id of the round it is in: a move plays on from here instead of replaying the round.
    #: It holds hidden tiles, like Round.hands: it never leaves the server.
    position = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["table", "number"],
                                               name="match_unique_number")]

    def __str__(self) -> str:
        return f"{self.table} match {self.number}"


class Round(models.Model):
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="rounds")
    number = models.PositiveIntegerField()
    hands = models.JSONField()
    boneyard = models.JSONField(default=list)
    opener = models.PositiveSmallIntegerField()
    #: Who sat where for this round: user ids (None for a bot).
    seat_users = models.JSONField(default=list)
    result = models.JSONField(null=True, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    voided = models.BooleanField(default=False)

    class Meta:
        ordering = ["number"]
        constraints = [models.UniqueConstraint(fields=["match", "number"],
                                               name="round_unique_number")]

    def __str__(self) -> str:
        return f"{self.match} round {self.number + 1}"


class Move(models.Model):
    class By(models.TextChoices):
        PLAYER = "player", _("the player")
        TABLE = "table", _("the table (time ran out)")
        BOT = "bot", _("a bot")

    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="moves")
    ply = models.PositiveIntegerField()
    seat = models.PositiveSmallIntegerField()
    tile = models.CharField(max_length=3, blank=True)
    end = models.CharField(max_length=1, blank=True)
    is_pass = models.BooleanField(default=False)
    by = models.CharField(max_length=10, choices=By.choices, default=By.PLAYER)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                             on_delete=models.SET_NULL, related_name="+")
    #: The record's ``at``: set by the service to the time it also gives the engine.
    created_at = models.DateTimeField(default=timezone.now)
    #: For a move the table made by itself: the deadline it acted on (lateness = created - due).
    due_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["ply"]
        constraints = [models.UniqueConstraint(fields=["round", "ply"], name="move_unique_ply")]

    def __str__(self) -> str:
        return f"{self.round} move {self.ply + 1}"

    def as_record(self) -> dict:
        """The move as the harness writes it, with when (``at``) and by whom (``by``)."""
        if self.is_pass:
            out: dict = {"seat": self.seat, "pass": True}
        else:
            out = {"seat": self.seat, "play": self.tile}
            if self.end:
                out["end"] = self.end
        out["at"] = record_time(self.created_at)
        out["by"] = self.by
        return out


def record_time(moment) -> str:
    """A record's ``at``: ISO 8601 in UTC with milliseconds and the offset."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


class Invitation(models.Model):
    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="invitations")
    invitee = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                related_name="invitations")
    inviter = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["table", "invitee"],
                                               name="invitation_once")]

    def __str__(self) -> str:
        return f"{self.invitee} to {self.table}"


class TableEvent(models.Model):
    """What changed at a version of a table, for the sockets that must show it.

    Written in the transaction that bumps the version, so no event is lost with a doorbell; a
    table's state carries the last few (``apps.tables.state.LOG_LENGTH``), and older rows are
    deleted every minute (``apps.tables.services.prune_table_events``): nothing else reads them.
    """

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="events")
    version = models.PositiveIntegerField()
    events = models.JSONField(default=list)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["table", "version"],
                                               name="event_unique_version")]

    def __str__(self) -> str:
        return f"{self.table} v{self.version}"


class BeatMark(models.Model):
    """When beat's sweep last ran (one row): a gap longer than ``pace.OUTAGE_SECONDS`` is an
    outage, and every person's clock at a turn-based table moves on by it."""

    name = models.CharField(max_length=20, unique=True, default="sweep")
    seen_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} at {self.seen_at}"


class WebNode(models.Model):
    """One run of one web process, holding sockets: its lease on their presence.

    The process renews ``seen_at`` every few seconds while it holds sockets
    (``apps.realtime.hub``); when it stops (killed, crashed, its machine gone) the beat sweep
    finds the lease expired and ends the presence of every socket it held. ``name`` is the
    process's place (host and port), the same across restarts, so a process that starts again
    ends what its earlier run left at once.

    The process's identity is ``boot``, which it makes itself at start; this row is only its
    lease, and the sweep deletes it once it has expired and holds nothing (an idle process
    stops renewing). So connections point at the boot, not at the row's id, and whoever writes
    one writes the row again in the same transaction (``services.hold_lease``): no process ever
    holds an id the sweep can take away under it.
    """

    boot = models.CharField(max_length=64, unique=True)
    name = models.CharField(max_length=200, db_index=True)
    started_at = models.DateTimeField(default=timezone.now)
    seen_at = models.DateTimeField(default=timezone.now, db_index=True)

    def __str__(self) -> str:
        return f"{self.name} ({self.boot[:8]})"


class Connection(models.Model):
    """One open table socket: a player is connected while any of theirs exists."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="connections")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="+")
    channel_name = models.CharField(max_length=200, unique=True)
    #: The web process holding the socket (its boot); None for connections made outside a
    #: socket. DO_NOTHING: a lease is deleted only while it holds no connection, by one
    #: statement that checks both (``services.expire_leases``), never by Django's collector,
    #: which would read the connections first and null any written in between.
    node = models.ForeignKey(WebNode, to_field="boot", null=True, blank=True,
                             on_delete=models.DO_NOTHING, related_name="connections")
    opened_at = models.DateTimeField(auto_now_add=True)
    last_seen = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.user} at {self.table}"
