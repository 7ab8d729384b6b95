"""Asking for a match's review, and starting again the ones whose worker went away.

One review per match, of every seat: the match is finished and its replay already shows every
hand to those who played it, so all of them read the same review. The first person to ask pays
for it against their hourly limit (``REVIEWS_PER_HOUR``); asking for a review that exists costs
nothing and returns it. The work is a task on the worker's ``bots`` queue
(``apps.reviews.tasks.run_review``), sent after the commit.

A worker that restarts loses the task it was running (tasks are acknowledged when received).
Such a review stops moving: its ``heartbeat_at``, written with every few moves judged (and while
a queued review waits its turn), grows old. Two paths start it again with a new ``attempt``:
beat's ``restart_stalled`` every minute, for any review quiet for ``REVIEW_STALL_SECONDS``; and
asking for it again, at once. A run that was only slow, not dead, meets the newer attempt on the
row at its next write and stops (``running.Superseded``), so one attempt's result is stored.
A failed review starts again when asked for. After ``MAX_ATTEMPTS`` a review stays failed: a
match whose review cannot be finished does not take the worker's time again and again.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.bots import accuracy
from apps.bots.review import count_moves, same_position, views_at
from apps.core.errors import ServiceError
from apps.tables import selectors as tables
from apps.tables.models import Match, Table
from apps.tables.scheduling import BOTS_QUEUE

from . import selectors
from .models import MAX_ATTEMPTS, Exercise, MatchReview, PlayerAccuracy

log = logging.getLogger(__name__)

#: The task's name (``apps.reviews.tasks``), sent by name as the tables send theirs.
RUN_REVIEW = "apps.reviews.tasks.run_review"
#: How far back the hourly limit counts.
WINDOW = timedelta(hours=1)
#: A person's costliest marked moves of a reviewed match that become exercises, at most.
EXERCISES_PER_MATCH = 3


def stall_limit() -> timedelta:
    return timedelta(seconds=settings.REVIEW_STALL_SECONDS)


def may_review(match: Match | None, user) -> bool:
    """Whether ``user`` sat at ``match`` (in any round that counts) and it is finished: the
    people a review is for, and the only ones who may see it."""
    return (match is not None and match.finished_at is not None
            and tables.played_match(match, user))


def reviewable_match(table: Table, number: int, user) -> Match | None:
    """Match ``number`` of ``table`` when ``user`` may replay it and played it; else None."""
    match = tables.replayable_match(table, number, user)
    return match if may_review(match, user) else None


def request_review(*, user, table: Table, match: Match) -> MatchReview:
    """The review of ``match``: the stored one, the one under way, or a new one queued.

    Refused (``ServiceError``, nothing changed) when ``user`` did not play the finished match
    (``not_player``), or when they asked for ``REVIEWS_PER_HOUR`` new reviews in the last hour
    (``rate_limited``). A failed review, or one whose worker went away, starts again at no
    cost."""
    if match.table_id != table.pk or not may_review(match, user):
        raise ServiceError(_("Only the people who played this match can have it reviewed."),
                           code="not_player")
    with transaction.atomic():
        review = MatchReview.objects.select_for_update().filter(match=match).first()
        if review is not None:
            if _needs_restart(review):
                _restart_or_give_up(review)
            return review
        # The person's row, locked: two tabs asking at once count against one limit.
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        _check_limit(user)
        record = tables.finished_record(table, match.number)
        try:
            with transaction.atomic():
                review = MatchReview.objects.create(
                    match=match, requested_by=user, total=count_moves(record),
                    heartbeat_at=timezone.now())
        except IntegrityError:  # another player asked for it at the same moment
            return MatchReview.objects.get(match=match)
        _send_after_commit(review)
    return review


def _check_limit(user) -> None:
    limit = settings.REVIEWS_PER_HOUR
    since = timezone.now() - WINDOW
    recent = list(MatchReview.objects.filter(requested_by=user, created_at__gte=since)
                  .order_by("created_at").values_list("created_at", flat=True))
    if len(recent) < limit:
        return
    # The oldest of the last ``limit`` leaves the window first.
    free_at = recent[-limit] + WINDOW
    minutes = max(1, -(-int((free_at - timezone.now()).total_seconds()) // 60))
    raise ServiceError(
        ngettext("You can have %(limit)s match reviewed an hour. You can ask for another "
                 "review in %(minutes)s minutes.",
                 "You can have %(limit)s matches reviewed an hour. You can ask for another "
                 "review in %(minutes)s minutes.", limit) % {"limit": limit, "minutes": minutes},
        code="rate_limited")


def _stalled(review: MatchReview) -> bool:
    return review.active and review.heartbeat_at < timezone.now() - stall_limit()


def _needs_restart(review: MatchReview) -> bool:
    """Stalled, or failed with an attempt left."""
    return _stalled(review) or review.may_retry


def _restart_or_give_up(review: MatchReview) -> None:
    """A new attempt of ``review`` (the caller holds its row's lock), sent after the commit;
    after ``MAX_ATTEMPTS``, failed for good."""
    if review.attempt >= MAX_ATTEMPTS:
        review.status = MatchReview.Status.FAILED
        review.error = review.error or f"stalled in attempt {review.attempt}"
        review.finished_at = timezone.now()
        review.save(update_fields=["status", "error", "finished_at"])
        return
    review.attempt += 1
    review.status = MatchReview.Status.QUEUED
    review.done = 0
    review.error = ""
    review.heartbeat_at = timezone.now()
    review.save(update_fields=["attempt", "status", "done", "error", "heartbeat_at"])
    _send_after_commit(review)


def _send_after_commit(review: MatchReview) -> None:
    pk, attempt = review.pk, review.attempt
    transaction.on_commit(lambda: send(pk, attempt))


def send(review_id: int, attempt: int, *, countdown: float | None = None) -> None:
    """The task that computes attempt ``attempt`` of the review, on the ``bots`` queue. The
    broker being away loses nothing: the review stalls, and is started again."""
    try:
        current_app.send_task(RUN_REVIEW, (review_id, attempt), queue=BOTS_QUEUE,
                              countdown=countdown)
    except Exception:  # noqa: BLE001 (the broker is away: restart_stalled will send it)
        log.exception("could not send review %s; it starts again once stalled", review_id)


def restart_stalled(*, now=None) -> int:
    """Start again every queued or running review that has not moved for
    ``REVIEW_STALL_SECONDS`` (its worker went away, or its task was never sent), or give it up
    after ``MAX_ATTEMPTS``. Returns how many started again."""
    now = now or timezone.now()
    cutoff = now - stall_limit()
    stalled = MatchReview.objects.filter(
        status__in=[MatchReview.Status.QUEUED, MatchReview.Status.RUNNING],
        heartbeat_at__lt=cutoff)
    restarted = 0
    for pk in list(stalled.values_list("pk", flat=True)[:100]):
        with transaction.atomic():
            review = MatchReview.objects.select_for_update().filter(pk=pk).first()
            if review is None or not _stalled(review):
                continue  # it moved, or finished, since the query
            log.warning("review %s stalled at %s/%s (attempt %s of %s)", pk, review.done,
                        review.total, review.attempt, MAX_ATTEMPTS)
            _restart_or_give_up(review)
            restarted += review.status == MatchReview.Status.QUEUED
    return restarted


# -- the numbers players see, and their exercises ----------------------------------------------

def take_numbers(review: MatchReview, record: dict | None = None) -> int:
    """Once ``review`` is done: each person's accuracy in the match (``PlayerAccuracy``) and
    their costliest marked moves as exercises, each starting from the view their seat had just
    before the move. Idempotent (a second call changes nothing). Returns the exercises made."""
    result = review.result or {}
    if review.status != MatchReview.Status.DONE or not result.get("ok"):
        return 0
    match = review.match
    people = selectors.people_seats(match)
    wanted: dict[int, list[tuple[int, dict]]] = {}
    for user_id, seats in people.items():
        numbers = accuracy.player_accuracy(result, seats)
        PlayerAccuracy.objects.get_or_create(
            user_id=user_id, match=match,
            defaults={"review": review, "accuracy": numbers["accuracy"],
                      "judged": numbers["judged"], "loss": numbers["loss"],
                      "inaccuracies": numbers["inaccuracy"], "mistakes": numbers["mistake"],
                      "blunders": numbers["blunder"]})
        costly = [(k, move) for k, rnd in enumerate(result.get("rounds", []))
                  for move in rnd.get("moves", [])
                  if k < len(seats) and move.get("seat") == seats[k] and move.get("mark")
                  and not move.get("forced")]
        costly.sort(key=lambda item: (-item[1]["loss"], item[0], item[1]["index"]))
        wanted[user_id] = costly[:EXERCISES_PER_MATCH]
    if not any(wanted.values()):
        return 0
    if record is None:
        record = tables.finished_record(match.table, match.number)
    views = views_at(record, {(k, m["index"]) for moves in wanted.values() for k, m in moves})
    made = 0
    for user_id, moves in wanted.items():
        for k, move in moves:
            view = views[(k, move["index"])]
            _exercise, created = Exercise.objects.get_or_create(
                user_id=user_id, review=review, round_index=k, move_index=move["index"],
                defaults={"seat": move["seat"], "view": view, "played": move["played"],
                          "best": move["best"], "loss": move["loss"], "mark": move["mark"],
                          "reasons": move.get("reasons", [])})
            made += created
    return made


def answer_exercise(*, user, exercise_id: int, choice: int) -> Exercise:
    """``user``'s try at their exercise: ``choice`` an index into the view's legal moves. The
    first try is kept (progress); a later one is only checked. ``ServiceError`` for a choice
    that is not one of the legal moves."""
    with transaction.atomic():
        exercise = (Exercise.objects.select_for_update()
                    .filter(pk=exercise_id, user=user).first())
        if exercise is None:
            raise ServiceError(_("No such exercise of yours."), code="not_found")
        legal = exercise.view.get("legal", [])
        if not 0 <= choice < len(legal):
            raise ServiceError(_("Choose one of the moves shown."), code="bad_choice")
        correct = is_best(exercise, choice)
        if exercise.answer is None:
            exercise.answer, exercise.correct = choice, correct
            exercise.answered_at = timezone.now()
            exercise.save(update_fields=["answer", "correct", "answered_at"])
    exercise.last_choice, exercise.last_correct = choice, correct
    return exercise


def is_best(exercise: Exercise, choice: int) -> bool:
    """Whether legal move ``choice`` leads where the bot's move leads."""
    legal = exercise.view.get("legal", [])
    best = legal.index(exercise.best) if exercise.best in legal else None
    return best is not None and same_position(exercise.view, choice, best)
