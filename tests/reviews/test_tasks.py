"""The review's task (apps.reviews.tasks.run_review): the real ``review_record`` over a real
finished match with a small budget, its bar kept on the row, the result stored equal to what
``python -m apps.bots.review`` prints for the downloaded record and each seat; a run that lost
its row (a newer attempt, the match deleted) stops; one that must wait its turn is sent again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from apps.bots import review as bot_review
from apps.reviews import running, services, tasks
from apps.reviews.models import MatchReview
from apps.tables.selectors import finished_record

from .conftest import DEALS

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture
def in_process(monkeypatch):
    """The review computed in the test's process, where ``review_record`` can be replaced."""
    monkeypatch.setattr(running, "IN_PROCESS", True)


def queued(table, match, user, capture) -> MatchReview:
    with capture(execute=True):
        return services.request_review(user=user, table=table, match=match)


def only_seat(result: dict, seat: int) -> dict:
    """The review of every seat cut down to one: what ``--seat N`` prints."""
    return {**result, "seats": [seat],
            "rounds": [{"number": rnd["number"],
                        "moves": [m for m in rnd["moves"] if m["seat"] == seat],
                        "summary": {str(seat): rnd["summary"][str(seat)]}}
                       for rnd in result["rounds"]]}


@pytest.mark.slow
def test_the_task_stores_the_review_the_command_prints(
        finished, people, sent, client, tmp_path, django_capture_on_commit_callbacks):
    table, match = finished
    review = queued(table, match, people["ana"], django_capture_on_commit_callbacks)
    assert tasks.run_review(review.pk, review.attempt) == "done"
    review.refresh_from_db()
    assert review.status == "done" and review.done == review.total > 0
    assert review.finished_at is not None and review.error == ""
    result = review.result
    assert result["ok"] and result["seats"] == [0, 1]
    # Every move of every seat is judged, in the record's order.
    record = finished_record(table, match.number)
    for rnd, raw in zip(result["rounds"], record["rounds"], strict=True):
        assert [m["index"] for m in rnd["moves"]] == list(range(len(raw["moves"])))
    # The same as the review module gives for that record...
    assert result == json.loads(json.dumps(bot_review.review_record(
        record, seed=0, budget=bot_review.review_budget(DEALS))))
    # ...and as its command prints for the record the replay page downloads, seat by seat.
    client.force_login(people["ana"])
    download = client.get(f"/t/{table.code}/record.json?match={match.number}")
    assert download.status_code == 200
    path = tmp_path / "record.json"
    path.write_bytes(download.content)
    for seat in (0, 1):
        out = subprocess.run([sys.executable, "-m", "apps.bots.review", str(path),
                              "--seat", str(seat), "--deals", str(DEALS)],
                             cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout) == only_seat(result, seat)
    # And the page's JSON carries it as stored.
    page = client.get(f"/t/{table.code}/matches/{match.number}/review.json").json()
    assert page["status"] == "done" and page["result"] == result


def test_the_bar_moves_as_moves_are_judged(finished, people, sent, monkeypatch, in_process,
                                           django_capture_on_commit_callbacks):
    table, match = finished
    review = queued(table, match, people["ana"], django_capture_on_commit_callbacks)
    monkeypatch.setattr(running, "PROGRESS_EVERY_SECONDS", 0)
    seen = []
    real = running.review_record

    def watched(record, *, progress, **kw):
        def step(done, total):
            progress(done, total)
            row = MatchReview.objects.get(pk=review.pk)
            seen.append((row.status, row.done, row.total))
        return real(record, progress=step, **kw)

    monkeypatch.setattr(running, "review_record", watched)
    assert running.run(review.pk, review.attempt) == "done"
    assert seen == [("running", k, review.total) for k in range(1, review.total + 1)]
    # Once done, each person's accuracy is taken (the profile's, the history rows').
    from apps.reviews.models import PlayerAccuracy
    assert set(PlayerAccuracy.objects.filter(match=match).values_list("user_id", flat=True)) \
        == {people["host"].pk, people["ana"].pk}


def test_the_bar_is_written_at_most_every_half_second(finished, people, sent, monkeypatch,
                                                      django_capture_on_commit_callbacks):
    table, match = finished
    review = queued(table, match, people["ana"], django_capture_on_commit_callbacks)
    progress = running._Progress(review.pk, review.attempt, review.total)
    MatchReview.objects.filter(pk=review.pk).update(status="running")
    clock = iter([100.0, 100.1, 100.2, 100.7, 100.8, 100.9])
    progress.clock = lambda: next(clock)
    for done in range(1, 6):
        progress(done, 10)
        if done == 1:
            assert MatchReview.objects.get(pk=review.pk).done == 1
    # Written at 100.0 (1) and 100.7 (4); 2, 3 and 5 came too soon after.
    assert MatchReview.objects.get(pk=review.pk).done == 4
    progress(10, 10)  # the last move always is
    assert MatchReview.objects.get(pk=review.pk).done == 10


def test_a_run_that_lost_its_attempt_stops_and_stores_nothing(
        finished, people, sent, monkeypatch, in_process, django_capture_on_commit_callbacks):
    table, match = finished
    review = queued(table, match, people["ana"], django_capture_on_commit_callbacks)
    monkeypatch.setattr(running, "PROGRESS_EVERY_SECONDS", 0)
    real = running.review_record

    def restarted_meanwhile(record, *, progress, **kw):
        def step(done, total):
            if done == 2:  # beat thought this run dead and started attempt 2
                MatchReview.objects.filter(pk=review.pk).update(attempt=2, status="queued")
            progress(done, total)
        return real(record, progress=step, **kw)

    monkeypatch.setattr(running, "review_record", restarted_meanwhile)
    assert tasks.run_review(review.pk, 1) == "superseded"
    row = MatchReview.objects.get(pk=review.pk)
    assert (row.status, row.attempt, row.result) == ("queued", 2, None)
    # A late task of an old attempt does nothing at all.
    assert tasks.run_review(review.pk, 1) == "not current"


def test_a_match_deleted_mid_review_ends_it_quietly(finished, people, sent, monkeypatch, in_process,
                                                    django_capture_on_commit_callbacks):
    table, match = finished
    review = queued(table, match, people["ana"], django_capture_on_commit_callbacks)
    monkeypatch.setattr(running, "PROGRESS_EVERY_SECONDS", 0)
    real = running.review_record

    def deleted_meanwhile(record, *, progress, **kw):
        def step(done, total):
            if done == 1:
                table.delete()
            progress(done, total)
        return real(record, progress=step, **kw)

    monkeypatch.setattr(running, "review_record", deleted_meanwhile)
    assert tasks.run_review(review.pk, review.attempt) == "superseded"
    assert not MatchReview.objects.exists()
    assert tasks.run_review(review.pk, review.attempt) == "gone"


@pytest.mark.slow
def test_one_review_at_a_time_the_next_waits_its_turn(
        people, sent, settings, django_capture_on_commit_callbacks):
    from .conftest import finish, two_player_table

    settings.REVIEWS_AT_ONCE = 1
    first, second = (two_player_table(people["host"], people["ana"]) for _ in range(2))
    a = queued(first, finish(first, 1), people["ana"], django_capture_on_commit_callbacks)
    b = queued(second, finish(second, 2), people["ana"], django_capture_on_commit_callbacks)
    MatchReview.objects.filter(pk=a.pk).update(status="running")
    before = MatchReview.objects.get(pk=b.pk).heartbeat_at
    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.run_review(b.pk, b.attempt) == "waiting"
    waiting = MatchReview.objects.get(pk=b.pk)
    assert waiting.status == "queued" and waiting.heartbeat_at >= before
    assert sent[-1] == (b.pk, 1)
    # Once the first is done, the second runs.
    MatchReview.objects.filter(pk=a.pk).update(status="done")
    assert tasks.run_review(b.pk, b.attempt) == "done"


def test_a_review_that_raises_is_marked_failed(finished, people, sent, monkeypatch, in_process,
                                               django_capture_on_commit_callbacks):
    table, match = finished
    review = queued(table, match, people["ana"], django_capture_on_commit_callbacks)

    def broken(*args, **kwargs):
        raise ValueError("no such tile")

    monkeypatch.setattr(running, "review_record", broken)
    assert tasks.run_review(review.pk, review.attempt) == "failed"
    row = MatchReview.objects.get(pk=review.pk)
    assert row.status == "failed" and row.error == "ValueError: no such tile"


class FakeChild:
    """A review's process that says nothing, or ends, as ``follow`` sees it."""

    def __init__(self, messages=(), ends=False):
        self.messages = list(messages)
        self.ends = ends
        self.exitcode = None

    def poll(self, timeout):
        return bool(self.messages) or self.ends

    def recv(self):
        if self.messages:
            return self.messages.pop(0)
        self.exitcode = -9
        raise EOFError


def test_a_review_process_that_judges_nothing_for_too_long_is_given_up(
        finished, people, sent, django_capture_on_commit_callbacks):
    table, match = finished
    review = queued(table, match, people["ana"], django_capture_on_commit_callbacks)
    MatchReview.objects.filter(pk=review.pk).update(status="running")
    progress = running._Progress(review.pk, review.attempt, review.total)
    quiet = FakeChild([("progress", 1, review.total)])
    with pytest.raises(running.Failed, match="no move judged in 0 s"):
        running.follow(quiet, quiet, progress, quiet_limit=0.2)
    assert MatchReview.objects.get(pk=review.pk).done == 1
    died = FakeChild(ends=True)
    with pytest.raises(running.Failed, match="ended .exit code -9."):
        running.follow(died, died, progress)
    said = FakeChild([("progress", 2, review.total), ("error", "RuleError: bad\ntraceback")])
    with pytest.raises(running.Failed, match="RuleError: bad"):
        running.follow(said, said, progress)


@pytest.mark.slow
def test_the_review_process_is_stopped_when_its_row_moved_on(
        finished, people, sent, settings, django_capture_on_commit_callbacks):
    """A real child, stopped at its first progress when the attempt is no longer current."""
    table, match = finished
    review = queued(table, match, people["ana"], django_capture_on_commit_callbacks)
    MatchReview.objects.filter(pk=review.pk).update(status="running", attempt=7)
    progress = running._Progress(review.pk, review.attempt, review.total)
    with pytest.raises(running.Superseded):
        running.compute(finished_record(table, match.number), 0, progress)


def test_the_tasks_are_known_by_the_names_they_are_sent_by(settings):
    from config.celery import app

    app.loader.import_default_modules()
    assert services.RUN_REVIEW in app.tasks
    names = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert "apps.reviews.tasks.restart_stalled" in names
    assert "apps.reviews.tasks.restart_stalled" in app.tasks
