"""A person's fair-play record, their part in each match, and a host's minimum.

Written only inside a table's transaction (:mod:`apps.fairplay.record`, through
``apps.tables.hooks.on_change``) or by :mod:`apps.fairplay.services`, so the record can never
disagree with the table: a change the table rolls back takes its fair-play rows with it.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from apps.tables.models import Match, Table


class Record(models.Model):
    """One person's counters. ``started`` counts every match they began (see docs/fairplay.md
    for when that is); the share is ``finished`` out of ``finished + abandoned``: matches
    closed by staff or by emptiness, and those still on, count neither way."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, primary_key=True,
                                on_delete=models.CASCADE, related_name="fairplay_record")
    started = models.PositiveIntegerField(default=0)
    finished = models.PositiveIntegerField(default=0)
    abandoned = models.PositiveIntegerField(default=0)
    #: When they abandoned their last matches, ISO 8601, oldest first (at most
    #: ``rules.KEPT_ABANDONMENTS``): the wait before quick play is counted from these.
    abandoned_at = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("fair-play record")
        verbose_name_plural = _("fair-play records")

    def __str__(self) -> str:
        return f"{self.user_id}: {self.finished}/{self.finished + self.abandoned}"


class Stint(models.Model):
    """A person's part in one match: once per (match, person), so a version replayed, or a
    person leaving and sitting down again, never counts twice."""

    class State(models.TextChoices):
        PLAYING = "playing", pgettext_lazy("fair play", "playing")
        FINISHED = "finished", pgettext_lazy("fair play", "finished")
        ABANDONED = "abandoned", pgettext_lazy("fair play", "abandoned")
        #: Neither way: the table was closed (staff, or nobody left at it), or staff removed
        #: the person.
        VOID = "void", pgettext_lazy("fair play", "not counted")

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="+")
    seat = models.PositiveSmallIntegerField()
    state = models.CharField(max_length=10, choices=State.choices, default=State.PLAYING)
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    #: How it ended when not finished: the seat event ("leaving", "left", "standin"), "staff"
    #: (removed, or the table closed by staff) or "closed" (nobody left at the table).
    how = models.CharField(max_length=10, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["match", "user"], name="stint_once")]
        indexes = [models.Index(fields=["user", "state", "ended_at"])]
        verbose_name = _("match played")
        verbose_name_plural = _("matches played")

    def __str__(self) -> str:
        return f"{self.user_id} in match {self.match_id}: {self.state}"


class TableMinimum(models.Model):
    """The host's condition on who sits: a fair-play share of at least ``minimum`` percent.
    No row, no condition."""

    table = models.OneToOneField(Table, primary_key=True, on_delete=models.CASCADE,
                                 related_name="+")
    minimum = models.PositiveSmallIntegerField()
    set_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                               on_delete=models.SET_NULL, related_name="+")
    set_at = models.DateTimeField()

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(minimum__gte=0, minimum__lte=100),
                                              name="fairplay_minimum_percent")]
        verbose_name = _("fair-play minimum")
        verbose_name_plural = _("fair-play minimums")

    def __str__(self) -> str:
        return f"{self.table_id}: {self.minimum}%"
