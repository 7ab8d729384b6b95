"""Friends fixtures: five people with accounts (display names = usernames) and a way to say
where someone is (a table socket: a Connection row, as the presence services write it)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from apps.tables.models import Connection

NAMES = ("ana", "bea", "caio", "dani", "host")


@pytest.fixture(autouse=True)
def _fresh_limits():
    """Friend requests are limited per person in the cache, which tests share: each starts
    with none counted."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


def make_people() -> dict:
    User = get_user_model()
    return {name: User.objects.create_user(username=name, password="pw-" + name * 2)
            for name in NAMES}


def at_table(user, table, channel: str | None = None) -> Connection:
    """``user`` holds a socket at ``table`` (what a page's socket leaves in the database)."""
    return Connection.objects.create(table=table, user=user,
                                     channel_name=channel or f"test.{user.pk}.{table.pk}")


def make_guest(user) -> None:
    user.profile.guest = True
    user.profile.save(update_fields=["guest"])


@pytest.fixture
def people(db):
    return make_people()
