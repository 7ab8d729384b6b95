"""Tournaments: Swiss and knockout, for pairs or one-on-one, played at ordinary public tables
(docs/tournaments.md).

A :class:`Tournament` takes :class:`Entrant` rows (people) grouped into :class:`Team` rows (one
person, or a fixed pair, registered when the partner accepts a :class:`PartnerInvitation`;
people who asked for a partner are paired at the start). Each
:class:`Round` holds its :class:`Game` rows: a tie between two teams at one table (one match,
or best of 3 or 5 in a knockout, played one after the other at that table), or a bye. The
tables themselves are the tables app's; a game only points at its table.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from apps.tables.models import preset_choices
from apps.tables.state import PARTNER_PRESETS


class Tournament(models.Model):
    class Format(models.TextChoices):
        SWISS = "swiss", _("Swiss")
        KNOCKOUT = "knockout", _("Knockout")

    class State(models.TextChoices):
        REGISTERING = "registering", _("Open for registration")
        RUNNING = "running", _("Being played")
        FINISHED = "finished", _("Finished")
        CANCELLED = "cancelled", _("Cancelled")

    name = models.CharField(max_length=40)
    preset = models.CharField(max_length=20, choices=preset_choices)
    #: 4 for the pair games, 2 for one-on-one.
    players = models.PositiveSmallIntegerField()
    format = models.CharField(max_length=10, choices=Format.choices)
    #: Swiss: the rounds to play; knockout: set at the start from the field's size.
    rounds = models.PositiveSmallIntegerField(default=0)
    #: Matches a knockout tie is played over (1, 3 or 5); a Swiss game is one match.
    best_of = models.PositiveSmallIntegerField(default=1)
    #: The per-move clock of its tables; None: no limit.
    turn_seconds = models.PositiveSmallIntegerField(null=True, blank=True)
    #: A turn-based tournament's time per move (its tables are turn-based); None: live.
    move_seconds = models.PositiveIntegerField(null=True, blank=True)
    #: Points to win a match; None: the game's own.
    target = models.PositiveSmallIntegerField(null=True, blank=True)
    starts_at = models.DateTimeField(db_index=True)
    #: Coins each person pays to enter (0: free), held in the club's purse.
    entry = models.PositiveIntegerField(default=0)
    #: Percent of the pot for place 1, 2, ...; adds up to 100.
    prize_split = models.JSONField(default=list)
    #: Coins the club adds to the prizes (staff only), shared by the same split.
    prize_added = models.PositiveIntegerField(default=0)
    max_teams = models.PositiveSmallIntegerField(default=16)
    state = models.CharField(max_length=12, choices=State.choices, default=State.REGISTERING,
                             db_index=True)
    #: Why it was cancelled: "cancelled" (by staff or its creator), "too_few" (teams).
    ended_reason = models.CharField(max_length=20, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                                   related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    #: The round being played (0 before the first).
    current_round = models.PositiveSmallIntegerField(default=0)
    #: When beat starts the next round (the previous one ended, plus the break).
    next_round_at = models.DateTimeField(null=True, blank=True, db_index=True)
    #: Bumped with every change the page shows; the socket's doorbell carries it.
    version = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-starts_at", "-pk"]
        permissions = [
            ("create_tournament", "Can create a tournament"),
            ("cancel_tournament", "Can cancel a tournament"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def pairs(self) -> bool:
        return self.players == 4 and self.preset in PARTNER_PRESETS

    @property
    def team_size(self) -> int:
        return 2 if self.pairs else 1

    @property
    def purse_key(self) -> str:
        return f"tournament:{self.pk}"


class Team(models.Model):
    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="teams")
    #: 1 is the strongest, set at the start from the ratings.
    seed = models.PositiveSmallIntegerField(null=True, blank=True)
    #: The team's rating at the start (a pair's: the mean of the two).
    rating = models.IntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["seed", "pk"]

    def __str__(self) -> str:
        return f"team {self.pk}"


class Entrant(models.Model):
    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE,
                                   related_name="entrants")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="+")
    #: None until the start for people who asked for a partner.
    team = models.ForeignKey(Team, null=True, blank=True, on_delete=models.SET_NULL,
                             related_name="members")
    #: Registered alone in a pairs tournament: paired with another such person at the start.
    wants_partner = models.BooleanField(default=False)
    #: Whose coins paid the entry (the person who registered a pair pays for both).
    paid_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                on_delete=models.SET_NULL, related_name="+")
    #: Nobody was left to partner them at the start: out, entry refunded.
    left_out = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [models.UniqueConstraint(fields=["tournament", "user"],
                                               name="entrant_once")]

    def __str__(self) -> str:
        return f"{self.user} in {self.tournament_id}"


class PartnerInvitation(models.Model):
    """A pair waiting for the partner's yes (docs/tournaments.md, "Registration"): the
    inviter's two entries are in the purse and the pair's place is held, counted against the
    size, until the partner accepts (the pair is registered: two :class:`Entrant` rows) or the
    hold ends: the partner declines, the inviter withdraws, the tournament starts or is
    cancelled. Then the row goes, and both entries go back to the inviter."""

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE,
                                   related_name="invitations")
    inviter = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                related_name="+")
    invitee = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["tournament", "inviter"], name="invites_once"),
            models.UniqueConstraint(fields=["tournament", "invitee"], name="invited_once"),
        ]

    def __str__(self) -> str:
        return f"{self.inviter_id} invites {self.invitee_id} to {self.tournament_id}"


class Round(models.Model):
    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="round_set")
    number = models.PositiveSmallIntegerField()
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["number"]
        constraints = [models.UniqueConstraint(fields=["tournament", "number"],
                                               name="round_once")]

    def __str__(self) -> str:
        return f"{self.tournament_id} round {self.number}"


class Game(models.Model):
    """One tie of a round: two teams at one table, or a team with a bye (``team_b`` None)."""

    class Outcome(models.TextChoices):
        PLAYED = "played", _("Played")
        BYE = "bye", _("Bye")
        FORFEIT = "forfeit", _("Won by forfeit")
        NO_SHOW = "no_show", _("Neither side showed up")
        ABANDONED = "abandoned", _("Abandoned")

    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="games")
    #: Board number in a Swiss round; the place in the bracket in a knockout.
    position = models.PositiveSmallIntegerField()
    team_a = models.ForeignKey(Team, null=True, blank=True, on_delete=models.CASCADE,
                               related_name="+")
    team_b = models.ForeignKey(Team, null=True, blank=True, on_delete=models.CASCADE,
                               related_name="+")
    table = models.OneToOneField("tables.Table", null=True, blank=True,
                                 on_delete=models.SET_NULL, related_name="tournament_game")
    opened_at = models.DateTimeField(null=True, blank=True, db_index=True)
    #: Who has come to the table (user ids): a team shows up when all its people have.
    present = models.JSONField(default=list)
    wins_a = models.PositiveSmallIntegerField(default=0)
    wins_b = models.PositiveSmallIntegerField(default=0)
    #: The matches already counted (table match ids), so an event heard twice counts once.
    counted = models.JSONField(default=list)
    winner = models.ForeignKey(Team, null=True, blank=True, on_delete=models.CASCADE,
                               related_name="+")
    outcome = models.CharField(max_length=10, choices=Outcome.choices, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["round__number", "position"]

    def __str__(self) -> str:
        return f"game {self.pk}"

    @property
    def decided(self) -> bool:
        return self.finished_at is not None
