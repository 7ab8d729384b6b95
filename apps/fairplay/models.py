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


# -- partners who may see each other's tiles (docs/collusion.md) -----------------------------

class Judgement(models.Model):
    """One finished rated match judged by the collusion check (``apps.bots.collusion``), once:
    a task run twice finds it done and counts nothing again."""

    class Status(models.TextChoices):
        QUEUED = "queued", pgettext_lazy("collusion check", "waiting")
        DONE = "done", pgettext_lazy("collusion check", "judged")
        SKIPPED = "skipped", pgettext_lazy("collusion check", "nothing to judge")
        FAILED = "failed", pgettext_lazy("collusion check", "failed")

    match = models.OneToOneField(Match, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    #: ``judge_record``'s counts per seat and telling positions (the pairs' share is in
    #: :class:`PairMatch`).
    result = models.JSONField(null=True, blank=True)
    #: Seconds the judging took (docs/capacity.md).
    seconds = models.FloatField(default=0.0)
    error = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["status", "created_at"], name="judgement_waiting")]
        verbose_name = _("collusion check of a match")
        verbose_name_plural = _("collusion checks of matches")

    def __str__(self) -> str:
        return f"collusion check of match {self.match_id}: {self.status}"


class Tally(models.Model):
    """The counts of ``apps.bots.collusion.Counts`` and the test's log likelihood ratio."""

    judged = models.PositiveIntegerField(default=0)
    plain = models.PositiveIntegerField(default=0)
    plain_agree = models.PositiveIntegerField(default=0)
    telling = models.PositiveIntegerField(default=0)
    knowing = models.PositiveIntegerField(default=0)
    own = models.PositiveIntegerField(default=0)
    other = models.PositiveIntegerField(default=0)
    #: The telling positions' picks by class (``Counts.cells``): the test weighs each class
    #: with its own rates, so the classes are kept, not only their sums.
    cells = models.JSONField(default=dict, blank=True)
    matches = models.PositiveIntegerField(default=0)
    llr = models.FloatField(default=0.0)
    updated_at = models.DateTimeField(null=True, blank=True)

    COUNTS = ("judged", "plain", "plain_agree", "telling", "knowing", "own", "other")

    class Meta:
        abstract = True

    def counts(self) -> dict:
        return {**{f: getattr(self, f) for f in self.COUNTS}, "cells": self.cells}


class PairTally(Tally):
    """Two people who played partners in judged matches: ``low`` has the smaller id."""

    low = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                            related_name="+")
    high = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="+")
    #: The ratio when staff last closed a report on the pair: a new report needs the evidence
    #: to grow by the threshold again (``services``).
    llr_at_close = models.FloatField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["low", "high"], name="pair_tally_once")]
        verbose_name = _("partners' collusion tally")
        verbose_name_plural = _("partners' collusion tallies")

    def __str__(self) -> str:
        return f"pair {self.low_id}+{self.high_id}: {self.llr:.1f}"


class PersonTally(Tally):
    """One person's own moves over all their partners."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, primary_key=True,
                                on_delete=models.CASCADE, related_name="+")

    class Meta:
        verbose_name = _("person's collusion tally")
        verbose_name_plural = _("people's collusion tallies")

    def __str__(self) -> str:
        return f"{self.user_id}: {self.llr:.1f}"


class PairMatch(models.Model):
    """A pair's share of one judged match: its counts and telling positions (the report's)."""

    pair = models.ForeignKey(PairTally, on_delete=models.CASCADE, related_name="matches_judged")
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="+")
    seats = models.JSONField(default=list)
    counts = models.JSONField(default=dict)
    telling = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["pair", "match"],
                                               name="pair_match_once")]
        ordering = ["created_at", "pk"]
        verbose_name = _("pair's judged match")
        verbose_name_plural = _("pairs' judged matches")

    def __str__(self) -> str:
        return f"pair {self.pair_id} in match {self.match_id}"


class CollusionReport(models.Model):
    """Staff's case on a pair whose test crossed the threshold. Never acts by itself: staff
    dismiss it or act (with the moderation tools), and the decision is on the modlog through the
    moderation report it opened (``report``)."""

    class Status(models.TextChoices):
        OPEN = "open", pgettext_lazy("collusion report", "open")
        DISMISSED = "dismissed", pgettext_lazy("collusion report", "dismissed")
        ACTED = "acted", pgettext_lazy("collusion report", "acted on")

    pair = models.ForeignKey(PairTally, on_delete=models.CASCADE, related_name="reports")
    report = models.OneToOneField("moderation.Report", null=True, blank=True,
                                  on_delete=models.SET_NULL, related_name="+")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    #: ``apps.bots.collusion.verdict`` when the pair crossed the threshold.
    verdict = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)
    handled_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("collusion report")
        verbose_name_plural = _("collusion reports")

    def __str__(self) -> str:
        return f"collusion report {self.pk} on pair {self.pair_id} ({self.status})"
