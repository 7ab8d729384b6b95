"""Guests: a real user row for a visitor who plays without an account, named in their
language; what needs an account sends them to sign up; signing up turns the same row into an
account, so their seat and table stay theirs."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import translation

from apps.accounts import services
from apps.accounts.selectors import is_guest
from apps.accounts.validators import DISPLAY_NAME_MAX_LENGTH
from apps.moderation import services as moderation
from apps.tables import selectors as tables_selectors
from apps.tables import services as tables
from apps.tables.models import Table

from .conftest import PASSWORD


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


def signup_data(username="rosa", **extra):
    data = {"username": username, "email": f"{username}@example.com", "password1": PASSWORD,
            "password2": PASSWORD, "display_name": username.capitalize(), "avatar": "owl",
            "language": "es"}
    data.update(extra)
    return data


@pytest.mark.parametrize(("language", "word", "digits"),
                         [("es", "Invitado", 3), ("pt-br", "Convidado", 2), ("en", "Guest", 6)])
def test_a_guest_is_a_real_user_with_a_guest_name_in_their_language(db, language, word, digits):
    guest = services.start_guest(language=language)
    guest.refresh_from_db()
    name = guest.profile.display_name
    assert guest.username.startswith("guest-") and not guest.has_usable_password()
    assert guest.profile.guest and guest.profile.language == language and is_guest(guest)
    assert name.startswith(word + " ") and len(name) <= DISPLAY_NAME_MAX_LENGTH
    assert len(name.split(" ")[1]) == digits and name.split(" ")[1].isdigit()


def test_guest_names_stay_unique_when_the_numbers_run_out(db):
    # Portuguese leaves room for two digits: 100 numbers; the 150 guests still differ.
    names = [services.start_guest(language="pt-br").profile.display_name for _ in range(150)]
    assert len(set(n.casefold() for n in names)) == 150
    assert all(len(n) <= DISPLAY_NAME_MAX_LENGTH and n.startswith("Convidado ") for n in names)


def test_a_member_can_never_take_a_guest_name_or_username(client, db):
    guest = services.start_guest(language="en")
    response = client.post(reverse("accounts:signup"), signup_data(
        "guest-abc", display_name=guest.profile.display_name))
    assert response.status_code == 200
    form = response.context["form"]
    assert "guest-" in " ".join(form.errors["username"])
    assert form.errors["display_name"]


def test_guest_sessions_per_address_are_limited(client, db, settings):
    settings.GUESTS_PER_ADDRESS_PER_HOUR = 2
    for _ in range(2):
        services.start_guest(language="es", address="192.0.2.1")
    with pytest.raises(services.GuestRefused) as info, translation.override("es"):
        services.start_guest(language="es", address="192.0.2.1")
    assert info.value.code == "guest_limit" and "hora" in info.value.message
    services.start_guest(language="es", address="192.0.2.2")


def test_watch_as_a_guest_gives_a_visitor_a_session_and_returns_to_the_table(client, db):
    host = services.sign_up(username="ana", email="ana@example.com", password=PASSWORD,
                            display_name="ana", avatar="cat", language="es")
    table = tables.create_table(host=host, preset="partners", public=True)
    page = client.get(reverse("tables:table", args=[table.code]))
    assert b"Mirar como invitado" in page.content
    assert page.context["watch_as_guest"]
    response = client.post(reverse("accounts:guest"),
                           {"next": reverse("tables:table", args=[table.code])})
    assert response.status_code == 302 and response.url == f"/t/{table.code}/"
    page = client.get(response.url)
    assert is_guest(page.context["user"]) and not page.context["watch_as_guest"]
    assert "Invitado" in page.content.decode()
    # The table's state is open to them as to any signed-in person without a seat.
    assert tables_selectors.may_watch(table_id=table.pk, user=page.context["user"])
    # An invite-only table offers no such button.
    hidden = tables.create_table(host=host, preset="partners")
    client.logout()
    page = client.get(reverse("tables:table", args=[hidden.code]))
    assert not page.context["watch_as_guest"] and b"Mirar como invitado" not in page.content


def test_guest_limit_on_the_watch_button_is_a_clear_message(client, db, settings):
    settings.GUESTS_PER_ADDRESS_PER_HOUR = 0
    response = client.post(reverse("accounts:guest"), {"next": "/lobby/"}, follow=True)
    assert "última hora" in response.content.decode()
    assert not response.context["user"].is_authenticated


@pytest.mark.parametrize("path", ["/accounts/profile/", "/tables/new/"])
def test_what_needs_an_account_sends_a_guest_to_sign_up(client, db, path):
    client.force_login(services.start_guest(language="en"))
    response = client.get(path, HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 302
    assert response.url == f"/accounts/signup/?next={path.replace('/', '%2F')}"
    page = client.get(response.url)
    assert "Sign up to do that" in page.content.decode()


def test_guests_chat_only_at_tables_with_people(db):
    host = services.sign_up(username="ana", email="ana@example.com", password=PASSWORD,
                            display_name="ana", avatar="cat", language="es")
    guest = services.start_guest(language="es")
    friends = tables.create_table(host=host, preset="partners", public=True)
    tables.join_table(user=guest, table_id=friends.pk)
    with pytest.raises(tables.ServiceError) as info, translation.override("es"):
        moderation.post_chat(user=guest, table_id=friends.pk, text="hola")
    assert info.value.code == "guest" and "Regístrate" in info.value.message
    moderation.post_chat(user=host, table_id=friends.pk, text="hola")
    # Not at their own practice table either: nobody is there to read it (issue 36).
    own = tables.open_practice(user=guest, preset="partners")
    with pytest.raises(tables.ServiceError) as info:
        moderation.post_chat(user=guest, table_id=own.pk, text="a ver")
    assert info.value.code == "practice"


def test_signing_up_from_a_guest_session_keeps_the_seat_and_the_table(client, db):
    response = client.post(reverse("tables:practice"),
                           {"preset": "draw", "players": "3", "bot_level": "easy"},
                           HTTP_ACCEPT_LANGUAGE="pt-br")
    table = Table.objects.get()
    guest = table.host
    assert response.url == f"/t/{table.code}/" and is_guest(guest)
    page = client.get(response.url)
    assert page.context["guest"] and "Cadastre-se e continue jogando" in page.content.decode()
    state_before = page.context["state"]
    assert state_before["you"]["seat"] == 0 and state_before["view"]["hand"]

    form = client.get(page.context["signup_url"])
    assert form.context["guest"] and "Convidado" in form.content.decode()
    response = client.post(reverse("accounts:signup"),
                           signup_data("rosa", next=f"/t/{table.code}/", language="pt-br"))
    assert response.status_code == 302 and response.url == f"/t/{table.code}/"

    guest.refresh_from_db()
    assert guest.username == "rosa" and guest.check_password(PASSWORD)
    assert not guest.profile.guest and guest.profile.display_name == "Rosa"
    table.refresh_from_db()
    assert table.host_id == guest.pk and table.seats.get(index=0).user_id == guest.pk
    assert table.state == Table.State.PLAYING
    # Still signed in as the same person, who sees their own hand at the table.
    page = client.get(f"/t/{table.code}/")
    assert page.context["user"].pk == guest.pk and not page.context["guest"]
    state = page.context["state"]
    assert state["you"]["seat"] == 0 and state["view"]["hand"] == state_before["view"]["hand"]
    # Everyone at the table sees the new name (the table's state was built again).
    assert state["seats"][0]["name"] == "Rosa" and state["version"] > state_before["version"]
    # And may now do what needs an account; they can sign in with the new password.
    assert client.get("/accounts/profile/").status_code == 200
    client.logout()
    assert client.login(username="rosa", password=PASSWORD)


def test_a_member_on_the_sign_up_page_is_sent_on(client, db):
    member = services.sign_up(username="ana", email="ana@example.com", password=PASSWORD,
                              display_name="ana", avatar="cat", language="es")
    client.force_login(member)
    assert client.get(reverse("accounts:signup")).status_code == 302
    with pytest.raises(ValidationError):
        services.convert_guest(user=member, username="x2", email="x2@example.com",
                               password=PASSWORD, display_name="x2", avatar="cat",
                               language="es")
    member.refresh_from_db()
    assert member.username == "ana"


def test_a_guest_signing_up_with_a_bad_display_name_changes_nothing(client, db):
    guest = services.start_guest(language="en")
    client.force_login(guest)
    response = client.post(reverse("accounts:signup"), signup_data("rosa", display_name="a b"))
    assert response.status_code == 200 and response.context["form"].errors["display_name"]
    guest.refresh_from_db()
    assert guest.profile.guest and guest.username.startswith("guest-")


def test_a_guest_with_an_account_may_sign_in_to_it(client, user):
    guest = services.start_guest(language="es")
    client.force_login(guest)
    page = client.get(reverse("accounts:login"))
    assert page.status_code == 200
    assert 'href="/accounts/login/"' in client.get(reverse("accounts:signup")).content.decode()
    response = client.post(reverse("accounts:login"),
                           {"username": user.username, "password": PASSWORD})
    assert response.status_code == 302
    assert client.get("/").context["user"].pk == user.pk
    # A member is still sent on from the sign-in page.
    assert client.get(reverse("accounts:login")).status_code == 302
