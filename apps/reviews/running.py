"""The work of one review, on a worker: the match's record, ``review_record`` over every seat
with the bar kept up to date, the result stored. Called by ``tasks.run_review``."""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.bots.review import review_budget, review_record
from apps.tables import selectors as tables

from . import services
from .models import MatchReview

log = logging.getLogger(__name__)

#: The bar is written at most this often (and at the last move).
PROGRESS_EVERY_SECONDS = 0.5
#: A review waiting for its turn (``REVIEWS_AT_ONCE`` running) looks again after this long.
WAIT_SECONDS = 3.0


class Superseded(Exception):  # noqa: N818 (a signal to stop, not an error)
    """The row holds a newer attempt (this run was thought dead), or the match is gone."""


def review_options() -> dict:
    """What the site passes to ``review_record`` beyond the record: its budget, the review's
    own unless ``REVIEW_DEALS`` sets the deals per candidate (as the CLI's ``--deals``)."""
    return {"budget": review_budget(settings.REVIEW_DEALS)}


def run(review_id: int, attempt: int) -> str:
    """Compute attempt ``attempt`` of the review. Returns what happened, for the logs."""
    review = _claim(review_id, attempt)
    if isinstance(review, str):
        return review
    match = review.match
    record = tables.finished_record(match.table, match.number)
    progress = _Progress(review_id, attempt, review.total)
    try:
        result = review_record(record, seats=None, seed=review.seed, progress=progress,
                               **review_options())
    except Superseded:
        return "superseded"
    if not result.get("ok"):
        return _store(review_id, attempt, status=MatchReview.Status.FAILED,
                      error=str(result.get("error", "not ok"))[:200])
    return _store(review_id, attempt, status=MatchReview.Status.DONE, result=result,
                  done=progress.total, total=progress.total)


def fail(review_id: int, attempt: int, err: Exception) -> None:
    """The attempt raised: the review is marked failed (asking again starts it again)."""
    _store(review_id, attempt, status=MatchReview.Status.FAILED,
           error=f"{type(err).__name__}: {err}"[:200])


def _claim(review_id: int, attempt: int) -> MatchReview | str:
    """The row, now running, when this attempt is the current one and its turn came; else
    why not (a newer attempt, done, or waiting: sent again in ``WAIT_SECONDS``)."""
    now = timezone.now()
    with transaction.atomic():
        review = (MatchReview.objects.select_for_update().select_related("match__table")
                  .filter(pk=review_id).first())
        if review is None:
            return "gone"
        if review.attempt != attempt or not review.active:
            return "not current"
        running = (MatchReview.objects.filter(status=MatchReview.Status.RUNNING,
                                              heartbeat_at__gte=now - services.stall_limit())
                   .exclude(pk=review_id).count())
        if running >= settings.REVIEWS_AT_ONCE:
            review.heartbeat_at = now  # waiting is not stalling
            review.save(update_fields=["heartbeat_at"])
            transaction.on_commit(lambda: services.send(review_id, attempt,
                                                        countdown=WAIT_SECONDS))
            return "waiting"
        review.status = MatchReview.Status.RUNNING
        review.started_at = review.heartbeat_at = now
        review.done = 0
        review.save(update_fields=["status", "started_at", "heartbeat_at", "done"])
    return review


class _Progress:
    """``review_record``'s progress callback: done/total on the row, at most every
    ``PROGRESS_EVERY_SECONDS``; stops the run when the row holds another attempt."""

    def __init__(self, review_id: int, attempt: int, total: int) -> None:
        self.review_id, self.attempt, self.total = review_id, attempt, total
        self.written = float("-inf")
        self.clock = time.monotonic

    def __call__(self, done: int, total: int) -> None:
        self.total = total
        now = self.clock()
        if done < total and now - self.written < PROGRESS_EVERY_SECONDS:
            return
        self.written = now
        moved = (MatchReview.objects
                 .filter(pk=self.review_id, attempt=self.attempt,
                         status=MatchReview.Status.RUNNING)
                 .update(done=done, total=total, heartbeat_at=timezone.now()))
        if not moved:
            raise Superseded(self.review_id)


def _store(review_id: int, attempt: int, *, status: str, **fields) -> str:
    stored = (MatchReview.objects.filter(pk=review_id, attempt=attempt)
              .update(status=status, finished_at=timezone.now(),
                      heartbeat_at=timezone.now(), **fields))
    return status if stored else "superseded"
