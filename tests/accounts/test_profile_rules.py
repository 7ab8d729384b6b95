import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.staticfiles import finders
from django.core.exceptions import ValidationError

from apps.accounts import services
from apps.accounts.avatars import AVATAR_KEYS, avatar_url
from apps.accounts.models import Profile
from apps.accounts.selectors import display_name_taken, user_by_display_name
from tests.accounts.conftest import PASSWORD

SVG_NS = "{http://www.w3.org/2000/svg}"


def test_at_least_twelve_avatars_each_a_small_valid_svg():
    assert len(AVATAR_KEYS) >= 12
    assert len(set(AVATAR_KEYS)) == len(AVATAR_KEYS)
    for key in (*AVATAR_KEYS, "bot"):
        path = finders.find(f"avatars/{key}.svg")
        assert path, key
        assert Path(path).stat().st_size < 8_000
        root = ET.parse(path).getroot()
        assert root.tag == f"{SVG_NS}svg"
        assert root.get("viewBox") == "0 0 64 64"


def test_avatar_files_are_distinct():
    bodies = {Path(finders.find(f"avatars/{key}.svg")).read_bytes() for key in AVATAR_KEYS}
    assert len(bodies) == len(AVATAR_KEYS)


def test_avatar_url_and_static_serving(client):
    assert avatar_url("fox").endswith("/avatars/fox.svg")
    assert avatar_url("bot").endswith("/avatars/bot.svg")
    assert avatar_url("nonsense") == avatar_url("domino")
    response = client.get(avatar_url("fox"))
    assert response.status_code == 200


def test_user_by_display_name_is_case_insensitive_and_trimmed(make_user):
    alice = make_user("alice", display_name="AliceW")
    make_user("bob", display_name="Bob")
    assert user_by_display_name("alicew") == alice
    assert user_by_display_name("  ALICEW ") == alice
    assert user_by_display_name("carol") is None
    assert user_by_display_name("") is None


def test_display_name_taken(make_user):
    alice = make_user("alice", display_name="José")
    assert display_name_taken("josé")
    assert display_name_taken(" JOSÉ ")
    assert not display_name_taken("JOSÉ", exclude_user=alice)
    assert not display_name_taken("Josefa")


@pytest.mark.parametrize(
    "name",
    ["abcdefghijklm", "two words", "bad!", "<b>", "", "   ", "a/b"],
)
def test_bad_display_names_are_refused_by_the_service(db, name):
    with pytest.raises(ValidationError) as info:
        services.sign_up(
            username="zed",
            email="zed@example.com",
            password=PASSWORD,
            display_name=name,
            avatar="cat",
            language="en",
        )
    assert "display_name" in info.value.message_dict
    assert not get_user_model().objects.filter(username="zed").exists()


@pytest.mark.parametrize("name", ["abcdefghijkl", "Ana.María", "j_o-e", "42", "  padded  "])
def test_good_display_names(db, name):
    user = services.sign_up(
        username="zed",
        email="zed@example.com",
        password=PASSWORD,
        display_name=name,
        avatar="cat",
        language="en",
    )
    assert user.profile.display_name == name.strip()


def test_case_insensitive_duplicate_is_refused(make_user):
    make_user("alice", display_name="Alice")
    with pytest.raises(ValidationError):
        make_user("alice2", display_name="ALICE")


def test_database_constraint_backs_the_check(make_user):
    from django.db import IntegrityError, transaction

    make_user("alice", display_name="Alice")
    other = make_user("bob", display_name="Bob")
    profile = other.profile
    profile.display_name = "aLiCe"
    with pytest.raises(IntegrityError), transaction.atomic():
        profile.save()


def test_update_profile(user):
    profile = services.update_profile(
        user=user, display_name="NewName", avatar="owl", language="pt-br"
    )
    profile.refresh_from_db()
    assert (profile.display_name, profile.avatar, profile.language) == ("NewName", "owl", "pt-br")
    # Keeping one's own name (in another case) is fine.
    services.update_profile(user=user, display_name="newname", avatar="owl", language="en")


def test_unknown_avatar_or_language_refused(user):
    with pytest.raises(ValidationError) as info:
        services.update_profile(user=user, display_name="x", avatar="unicorn", language="fr")
    assert set(info.value.message_dict) == {"avatar", "language"}


def test_users_created_elsewhere_get_a_deduplicated_profile(make_user):
    make_user("carol", display_name="superadmin1")
    User = get_user_model()
    first = User.objects.create_superuser("superadmin1", "a@example.com", PASSWORD)
    second = User.objects.create_user("SuperAdmin1.", "b@example.com", PASSWORD)
    long_name = User.objects.create_user("a very long user@name", "c@example.com", PASSWORD)
    assert first.profile.display_name == "superadmin12"
    assert second.profile.display_name == "SuperAdmin1."
    assert long_name.profile.display_name == "averylonguse"
    assert Profile.objects.count() == 4


def test_ensure_profile_for_a_user_without_one(db):
    User = get_user_model()
    user = User.objects.create_user("dave", "d@example.com", PASSWORD)
    Profile.objects.filter(user=user).delete()
    user = User.objects.get(pk=user.pk)
    assert services.ensure_profile(user).display_name == "dave"


def test_a_new_name_or_avatar_reaches_the_open_tables_at_once(make_user):
    from apps.tables import services as tables
    from apps.tables import state
    from apps.tables.models import Table

    host, ana = make_user("hostess"), make_user("ana", avatar="cat")
    table = tables.create_table(host=host, preset="draw", players=2,
                                options={"turn_seconds": None})
    tables.join_table(user=ana, table_id=table.pk, code=table.code)
    closed = tables.create_table(host=ana, preset="draw", players=2)
    Table.objects.filter(pk=closed.pk).update(state=Table.State.CLOSED)
    closed_version = Table.objects.get(pk=closed.pk).version

    def anas_seat():
        snap = state.build_latest(table.pk)
        seat = state.compose(snap, state.Viewer(user_id=host.pk, language="en"))["seats"][1]
        return seat["name"], seat["avatar"]

    before = Table.objects.get(pk=table.pk).version
    assert anas_seat() == ("ana", "cat")
    services.update_profile(user=ana, display_name="AnaMaria", avatar="owl", language="es")
    assert Table.objects.get(pk=table.pk).version == before + 1
    assert anas_seat() == ("AnaMaria", "owl")
    # Only the language changed: nothing a table shows, so no new version anywhere.
    services.update_profile(user=ana, display_name="AnaMaria", avatar="owl", language="pt-br")
    assert Table.objects.get(pk=table.pk).version == before + 1
    assert Table.objects.get(pk=closed.pk).version == closed_version
