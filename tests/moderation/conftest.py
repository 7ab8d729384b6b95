"""Moderation fixtures: the five roles of the permission matrix and a started table."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser, Group

from apps.tables import services
from apps.tables.models import Table

ROLES = ("anonymous", "player", "host", "moderator", "superuser")


def moderator_group() -> Group:
    """The group the data migrations made (a transactional test's flush removes it: remade
    with the same rights)."""
    from apps.moderation.services import moderator_group as group

    return group()


def make_people() -> dict:
    User = get_user_model()
    people = {name: User.objects.create_user(username=name, password="pw-" + name * 2)
              for name in ("host", "ana", "bea", "caio", "outsider")}
    mod = User.objects.create_user(username="mod", password="pw-modmod", is_staff=True)
    mod.groups.add(moderator_group())
    people["mod"] = get_user_model().objects.get(pk=mod.pk)  # fresh permission cache
    people["root"] = User.objects.create_superuser(username="root", password="pw-rootroot",
                                                   email="root@example.com")
    return people


def actor_for(people: dict, role: str):
    return {"anonymous": AnonymousUser(), "player": people["ana"], "host": people["host"],
            "moderator": people["mod"], "superuser": people["root"]}[role]


def seat_table(people: dict, *, start: bool = True) -> Table:
    """A public partners table: host, ana, bea, caio in seats 0-3; no turn limit."""
    table = services.create_table(host=people["host"], preset="partners", public=True,
                                  options={"turn_seconds": None})
    for name in ("ana", "bea", "caio"):
        services.join_table(user=people[name], table_id=table.pk)
    if start:
        services.start_match(user=people["host"], table_id=table.pk)
    return Table.objects.get(pk=table.pk)


@pytest.fixture
def people(db):
    return make_people()


@pytest.fixture
def table(people):
    return seat_table(people)
