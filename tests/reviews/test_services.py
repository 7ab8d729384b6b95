"""Asking for a match's review (apps.reviews.services): only the people who played it, at most
REVIEWS_PER_HOUR new reviews a person an hour (refused with a message, nothing made), one review
per match however often it is asked for, practice matches and guests included; a review whose
worker went away is started again."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.accounts.services import start_guest
from apps.core.errors import ServiceError
from apps.reviews import services
from apps.reviews.models import MatchReview
from apps.tables import services as tables
from apps.tables.models import Table

from .conftest import finish, two_player_table


def ask(user, table, match, capture):
    with capture(execute=True):
        return services.request_review(user=user, table=table, match=match)


def test_only_the_players_may_ask(finished, people, sent, django_capture_on_commit_callbacks):
    table, match = finished
    for who in (people["outsider"], people["bea"]):
        with pytest.raises(ServiceError) as err:
            ask(who, table, match, django_capture_on_commit_callbacks)
        assert err.value.code == "not_player" and err.value.message
    from django.contrib.auth.models import AnonymousUser

    with pytest.raises(ServiceError):
        ask(AnonymousUser(), table, match, django_capture_on_commit_callbacks)
    assert not MatchReview.objects.exists() and sent == []


def test_an_unfinished_match_is_not_reviewed(people, sent, django_capture_on_commit_callbacks):
    table = two_player_table(people["host"], people["ana"])
    with pytest.raises(ServiceError) as err:
        ask(people["host"], table, table.current_match, django_capture_on_commit_callbacks)
    assert err.value.code == "not_player"
    assert not MatchReview.objects.exists() and sent == []


def test_a_review_is_queued_with_its_moves_counted_and_sent_after_commit(
        finished, people, sent, django_capture_on_commit_callbacks):
    table, match = finished
    from apps.bots.review import count_moves
    from apps.tables.selectors import finished_record

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        review = services.request_review(user=people["ana"], table=table, match=match)
        assert sent == []  # nothing leaves before the commit
    for callback in callbacks:
        callback()
    assert sent == [(review.pk, 1)]
    assert review.status == MatchReview.Status.QUEUED and review.done == 0
    assert review.total == count_moves(finished_record(table, match.number)) > 0
    assert review.requested_by == people["ana"] and review.seed == 0


def test_asking_again_returns_the_same_review_and_sends_nothing(
        finished, people, sent, django_capture_on_commit_callbacks):
    table, match = finished
    first = ask(people["ana"], table, match, django_capture_on_commit_callbacks)
    again = ask(people["ana"], table, match, django_capture_on_commit_callbacks)
    other = ask(people["host"], table, match, django_capture_on_commit_callbacks)
    assert first.pk == again.pk == other.pk
    assert MatchReview.objects.count() == 1 and len(sent) == 1
    # host's asking cost host nothing: the review stays ana's.
    assert MatchReview.objects.get().requested_by == people["ana"]


def test_the_hourly_limit_refuses_with_a_message_and_changes_nothing(
        people, sent, settings, django_capture_on_commit_callbacks):
    settings.REVIEWS_PER_HOUR = 2
    matches = []
    for seed in (1, 2, 3):
        table = two_player_table(people["host"], people["ana"])
        matches.append((Table.objects.get(pk=table.pk), finish(table, seed)))
    for table, match in matches[:2]:
        ask(people["ana"], table, match, django_capture_on_commit_callbacks)
    before = list(MatchReview.objects.values_list("pk", "status", "attempt"))
    table, match = matches[2]
    with pytest.raises(ServiceError) as err:
        ask(people["ana"], table, match, django_capture_on_commit_callbacks)
    assert err.value.code == "rate_limited"
    assert "2 matches reviewed an hour" in err.value.message
    assert "60 minutes" in err.value.message
    assert list(MatchReview.objects.values_list("pk", "status", "attempt")) == before
    assert len(sent) == 2
    # A review that exists costs nothing, even at the limit.
    again = ask(people["ana"], *matches[0], django_capture_on_commit_callbacks)
    assert again.match == matches[0][1] and len(sent) == 2
    # Somebody else who played the match may still ask (their own limit).
    other = ask(people["host"], table, match, django_capture_on_commit_callbacks)
    assert other.requested_by == people["host"]
    # An hour later ana's oldest review leaves the window.
    MatchReview.objects.filter(requested_by=people["ana"]).update(
        created_at=timezone.now() - timedelta(minutes=61))
    table4 = two_player_table(people["host"], people["ana"])
    assert ask(people["ana"], Table.objects.get(pk=table4.pk), finish(table4, 4),
               django_capture_on_commit_callbacks).requested_by == people["ana"]


def test_the_limit_names_the_minutes_left(people, sent, settings,
                                          django_capture_on_commit_callbacks):
    settings.REVIEWS_PER_HOUR = 1
    first, second = (two_player_table(people["host"], people["ana"]) for _ in range(2))
    ask(people["ana"], first, finish(first, 1), django_capture_on_commit_callbacks)
    MatchReview.objects.update(created_at=timezone.now() - timedelta(minutes=45, seconds=10))
    with pytest.raises(ServiceError) as err:
        ask(people["ana"], second, finish(second, 2), django_capture_on_commit_callbacks)
    assert "1 match reviewed an hour" in err.value.message
    assert "15 minutes" in err.value.message


def test_a_guest_reviews_their_own_practice_match(db, sent, django_capture_on_commit_callbacks):
    table = tables.open_practice(user=None, language="en", preset="draw", players=2,
                                 bot_level="easy", address="203.0.113.9")
    guest = table.host
    assert guest.profile.guest
    match = finish(table, 5)
    review = ask(guest, table, match, django_capture_on_commit_callbacks)
    assert review.requested_by == guest and len(sent) == 1
    # Another guest did not play it.
    stranger = start_guest(language="en")
    with pytest.raises(ServiceError):
        ask(stranger, table, match, django_capture_on_commit_callbacks)


def test_a_deleted_practice_table_takes_its_review_with_it(db, sent,
                                                         django_capture_on_commit_callbacks):
    table = tables.open_practice(user=None, language="en", preset="draw", players=2,
                                 bot_level="easy", address="203.0.113.9")
    match = finish(table, 6)
    ask(table.host, table, match, django_capture_on_commit_callbacks)
    Table.objects.filter(pk=table.pk).delete()  # as the sweep deletes a practice table
    assert not MatchReview.objects.exists()


def test_a_deleted_guest_leaves_the_review_to_the_others(
        finished, people, sent, django_capture_on_commit_callbacks):
    table, match = finished
    review = ask(people["ana"], table, match, django_capture_on_commit_callbacks)
    people["ana"].delete()
    review.refresh_from_db()
    assert review.requested_by is None


def test_a_stalled_or_failed_review_starts_again(finished, people, sent, settings,
                                                 django_capture_on_commit_callbacks):
    table, match = finished
    review = ask(people["ana"], table, match, django_capture_on_commit_callbacks)
    # Still moving: left alone by beat and by asking.
    with django_capture_on_commit_callbacks(execute=True):
        assert services.restart_stalled() == 0
    assert ask(people["ana"], table, match, django_capture_on_commit_callbacks).attempt == 1
    # The worker went away mid-way: quiet for longer than the limit.
    MatchReview.objects.update(status=MatchReview.Status.RUNNING, done=3,
                               heartbeat_at=timezone.now() - timedelta(
                                   seconds=settings.REVIEW_STALL_SECONDS + 1))
    with django_capture_on_commit_callbacks(execute=True):
        assert services.restart_stalled() == 1
    review.refresh_from_db()
    assert (review.status, review.done, review.attempt) == ("queued", 0, 2)
    assert sent[-1] == (review.pk, 2)
    # A failed one starts again when asked, at no cost.
    MatchReview.objects.update(status=MatchReview.Status.FAILED, error="boom")
    settings.REVIEWS_PER_HOUR = 1
    again = ask(people["ana"], table, match, django_capture_on_commit_callbacks)
    assert (again.status, again.attempt, again.error) == ("queued", 3, "")
    assert sent[-1] == (review.pk, 3)
    # The third attempt is the last: stalled again, it fails for good, and asking again
    # changes nothing.
    MatchReview.objects.update(heartbeat_at=timezone.now() - timedelta(
        seconds=settings.REVIEW_STALL_SECONDS + 1))
    with django_capture_on_commit_callbacks(execute=True):
        assert services.restart_stalled() == 0
    review.refresh_from_db()
    assert (review.status, review.attempt, review.may_retry) == ("failed", 3, False)
    assert review.error == "stalled in attempt 3"
    last = ask(people["ana"], table, match, django_capture_on_commit_callbacks)
    assert (last.status, last.attempt) == ("failed", 3) and len(sent) == 3
    from apps.reviews.selectors import payload

    shown = payload(last, match)
    assert shown["retry"] is False
    assert shown["message"] == "The review of this match could not be finished."


@pytest.mark.parametrize(("role", "allowed"), [
    ("anonymous", False), ("outsider", False), ("player", True), ("host", True),
    ("moderator", False), ("superuser", False)])
def test_who_may_ask_for_a_review(role, allowed, finished, people, sent,
                                  django_capture_on_commit_callbacks):
    """The review's row of the rights: the match's players, nobody else; staff neither (a
    private match's hands are the players' alone, as on its replay)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import AnonymousUser

    from tests.moderation.conftest import moderator_group

    User = get_user_model()
    table, match = finished
    if role == "moderator":
        actor = User.objects.create_user(username="mod", password="pw-modmod", is_staff=True)
        actor.groups.add(moderator_group())
    elif role == "superuser":
        actor = User.objects.create_superuser(username="root", password="pw-rootroot",
                                              email="root@example.com")
    else:
        actor = {"anonymous": AnonymousUser(), "outsider": people["outsider"],
                 "player": people["ana"], "host": people["host"]}[role]
    if allowed:
        assert ask(actor, table, match, django_capture_on_commit_callbacks).match == match
        assert len(sent) == 1
    else:
        with pytest.raises(ServiceError) as err:
            ask(actor, table, match, django_capture_on_commit_callbacks)
        assert err.value.code == "not_player"
        assert not MatchReview.objects.exists() and sent == []
