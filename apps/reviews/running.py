"""The work of one review, on a worker: the match's record, ``review_record`` over every seat
in a process of its own (``child``) with the bar kept up to date, the result stored. Called by
``tasks.run_review``.

A process of its own, so that a review cannot take the worker with it: its search does not hold
the worker's interpreter (the tables' timers and the slow bots' turns run there too), and one
that judges no move for ``REVIEW_STALL_SECONDS`` is stopped and marked failed.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.bots.review import review_budget, review_record
from apps.tables import selectors as tables

from . import child, events, services
from .models import MatchReview

log = logging.getLogger(__name__)

#: The bar is written at most this often (and at the last move).
PROGRESS_EVERY_SECONDS = 0.5
#: While a move takes long, the row still says the review is alive this often.
HEARTBEAT_SECONDS = 5.0
#: A review waiting for its turn (``REVIEWS_AT_ONCE`` running) looks again after this long.
WAIT_SECONDS = 3.0
#: Tests that replace ``review_record`` compute here instead of in a process of its own.
IN_PROCESS = False


class Superseded(Exception):  # noqa: N818 (a signal to stop, not an error)
    """The row holds a newer attempt (this run was thought dead), or the match is gone."""


class Failed(Exception):  # noqa: N818
    """The review's process failed, ended without a result, or judged nothing for too long."""


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
        result = compute(record, review.seed, progress)
    except Superseded:
        return "superseded"
    except Failed as err:
        log.warning("review %s (attempt %s) failed: %s", review_id, attempt, err)
        return _store(review_id, attempt, status=MatchReview.Status.FAILED,
                      error=str(err).splitlines()[0][:200])
    if not result.get("ok"):
        return _store(review_id, attempt, status=MatchReview.Status.FAILED,
                      error=str(result.get("error", "not ok"))[:200])
    stored = _store(review_id, attempt, status=MatchReview.Status.DONE, result=result,
                    done=progress.total, total=progress.total)
    if stored == MatchReview.Status.DONE:
        _numbers(review_id, record)
        events.review_done.send(sender=MatchReview, review_id=review_id,
                                table_id=match.table_id, code=match.table.code,
                                number=match.number, requested_by_id=review.requested_by_id)
    return stored


def _numbers(review_id: int, record: dict) -> None:
    """The players' accuracies and exercises; the review itself stands if they fail."""
    try:
        services.take_numbers(MatchReview.objects.select_related("match__table")
                              .get(pk=review_id), record)
    except Exception:  # noqa: BLE001
        log.exception("the numbers of review %s could not be taken", review_id)


def compute(record: dict, seed: int, progress: _Progress) -> dict:
    """``review_record`` of every seat, in a process of its own (``IN_PROCESS``: here)."""
    if IN_PROCESS:
        return review_record(record, seats=None, seed=seed, progress=progress,
                             **review_options())
    process, conn = child.start(record, seed, settings.REVIEW_DEALS)
    try:
        return follow(process, conn, progress)
    finally:
        conn.close()
        if process.is_alive():
            process.kill()
        process.join(5)


def follow(process, conn, progress: _Progress, *, quiet_limit: float | None = None) -> dict:
    """Relay the child's progress to the row until its result comes; ``Failed`` when it fails,
    dies, or judges no move for ``quiet_limit`` seconds (``REVIEW_STALL_SECONDS``)."""
    quiet_limit = settings.REVIEW_STALL_SECONDS if quiet_limit is None else quiet_limit
    last = time.monotonic()
    while True:
        if conn.poll(0.5):
            try:
                message = conn.recv()
            except EOFError:
                raise Failed(f"the review's process ended (exit code {process.exitcode})") \
                    from None
            last = time.monotonic()
            if message[0] == "progress":
                progress(message[1], message[2])
            elif message[0] == "result":
                return message[1]
            else:
                raise Failed(message[1])
        elif time.monotonic() - last > quiet_limit:
            raise Failed(f"no move judged in {quiet_limit:.0f} s")
        else:
            progress.beat()


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
        self._write(now, done=done, total=total)

    def beat(self) -> None:
        """A long move: the row's heartbeat alone, now and then."""
        now = self.clock()
        if now - self.written >= HEARTBEAT_SECONDS:
            self._write(now)

    def _write(self, now: float, **fields) -> None:
        self.written = now
        moved = (MatchReview.objects
                 .filter(pk=self.review_id, attempt=self.attempt,
                         status=MatchReview.Status.RUNNING)
                 .update(heartbeat_at=timezone.now(), **fields))
        if not moved:
            raise Superseded(self.review_id)


def _store(review_id: int, attempt: int, *, status: str, **fields) -> str:
    stored = (MatchReview.objects.filter(pk=review_id, attempt=attempt)
              .update(status=status, finished_at=timezone.now(),
                      heartbeat_at=timezone.now(), **fields))
    return status if stored else "superseded"
