"""One review per finished match: every seat's moves judged by the master bot
(``apps.bots.review``), shared by everyone who played the match, computed once in the
background."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from apps.tables.models import Match

#: Starts of one review, at most (the first one included): a match whose review cannot be
#: finished does not take the worker's time again and again.
MAX_ATTEMPTS = 3


class MatchReview(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", _("waiting for its turn")
        RUNNING = "running", _("being reviewed")
        DONE = "done", _("reviewed")
        FAILED = "failed", _("failed")

    #: The match goes, its review goes (a practice table is deleted with all its matches).
    match = models.OneToOneField(Match, on_delete=models.CASCADE, related_name="review")
    #: Who asked first (the hourly limit counts these); a deleted guest leaves the review to
    #: the others who played.
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                     on_delete=models.SET_NULL, related_name="+")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    #: Moves judged so far and in all (``apps.bots.review.count_moves``): the page's bar.
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    #: ``review_record``'s output, exactly as ``python -m apps.bots.review`` prints it.
    result = models.JSONField(null=True, blank=True)
    seed = models.IntegerField(default=0)
    #: Each (re)start of the work: a run that finds a newer attempt on the row stops.
    attempt = models.PositiveIntegerField(default=1)
    #: Written by the running task as it goes (and by a queued one while it waits its turn):
    #: a queued or running review that has not moved for ``REVIEW_STALL_SECONDS`` is started
    #: again (``services.restart_stalled``).
    heartbeat_at = models.DateTimeField()
    #: Why the last attempt failed (an exception's name; the logs hold the rest).
    error = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["requested_by", "created_at"],
                                name="review_requested_recently"),
                   models.Index(fields=["status", "heartbeat_at"], name="review_stalled")]

    def __str__(self) -> str:
        return f"review of {self.match} ({self.status}, {self.done}/{self.total})"

    @property
    def active(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)

    @property
    def may_retry(self) -> bool:
        """Failed, and asking again would start it again."""
        return self.status == self.Status.FAILED and self.attempt < MAX_ATTEMPTS


class PlayerAccuracy(models.Model):
    """One person's numbers in one reviewed match (``apps.bots.accuracy.player_accuracy``),
    written when the review is done: the profile's last accuracies and its history rows read
    these instead of every stored review."""

    review = models.ForeignKey(MatchReview, on_delete=models.CASCADE, related_name="accuracies")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="+")
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="+")
    #: None when the person had no choice to make in the whole match.
    accuracy = models.FloatField(null=True, blank=True)
    judged = models.PositiveIntegerField(default=0)
    loss = models.FloatField(default=0.0)
    inaccuracies = models.PositiveIntegerField(default=0)
    mistakes = models.PositiveIntegerField(default=0)
    blunders = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "match"],
                                               name="player_accuracy_once")]
        indexes = [models.Index(fields=["user", "-created_at"], name="accuracy_latest")]

    def __str__(self) -> str:
        return f"{self.user_id} in {self.match_id}: {self.accuracy}"


class Exercise(models.Model):
    """"Train on your mistakes": one of a person's costly moves in a reviewed match, to be
    found again. ``view`` is the person's seat's view just before the move (what the seat was
    given at the table, ``apps.rules.view.seat_view``): never another hand or the boneyard."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="+")
    review = models.ForeignKey(MatchReview, on_delete=models.CASCADE, related_name="exercises")
    #: Round counted from 0 (as the replay counts) and the move's index in the record's round.
    round_index = models.PositiveIntegerField()
    move_index = models.PositiveIntegerField()
    seat = models.PositiveSmallIntegerField()
    view = models.JSONField()
    #: As the record wrote them (``played``) and as the view's legal move (``best``).
    played = models.JSONField()
    best = models.JSONField()
    loss = models.FloatField()
    mark = models.CharField(max_length=10)
    #: The review's reason codes with their parameters (``apps.reviews.words`` says them).
    reasons = models.JSONField(default=list)
    #: The first try: an index into ``view["legal"]``, and whether it found the bot's move.
    answer = models.PositiveSmallIntegerField(null=True, blank=True)
    correct = models.BooleanField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(
            fields=["user", "review", "round_index", "move_index"], name="exercise_once")]
        indexes = [models.Index(fields=["user", "answered_at"], name="exercise_to_do")]
        ordering = ["-loss", "pk"]

    def __str__(self) -> str:
        return f"exercise {self.pk} for {self.user_id}: {self.played} ({self.loss})"
