"""A person's last activity (apps/accounts/activity.py): a page they ask for writes it (at
most every ACTIVITY_WRITE_SECONDS per process), a socket frame only notes it and the web
process's heartbeat writes everyone noted in one statement."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from apps.accounts import activity
from apps.accounts.models import Profile

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh():
    activity._written.clear()
    activity._pending.clear()
    yield
    activity._written.clear()
    activity._pending.clear()


def moment(user):
    return Profile.objects.get(user=user).last_active_at


def test_a_page_writes_the_moment_once_per_window(settings):
    settings.ACTIVITY_WRITE_SECONDS = 3600
    user = get_user_model().objects.create_user(username="ana", password="pw-anaana")
    client = Client()
    client.force_login(user)
    assert moment(user) is None
    client.get("/lobby/")
    first = moment(user)
    assert first is not None
    client.get("/lobby/")
    assert moment(user) == first  # within the window: no write


def test_socket_frames_are_noted_and_written_together(django_assert_num_queries):
    users = [get_user_model().objects.create_user(username=n, password="pw-" + n * 2)
             for n in ("ana", "bea")]
    for user in users:
        activity.note(user.pk)
        activity.note(user.pk)  # twice: noted once
    assert activity.pending()
    with django_assert_num_queries(1):
        assert activity.flush() == 2
    assert all(moment(u) is not None for u in users)
    assert not activity.pending() and activity.flush() == 0
