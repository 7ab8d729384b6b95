import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.urls import reverse

from apps.accounts import ratelimit
from apps.accounts.models import Profile
from tests.accounts.conftest import PASSWORD


def signup_data(**overrides):
    data = {
        "username": "newbie",
        "email": "newbie@example.com",
        "password1": PASSWORD,
        "password2": PASSWORD,
        "display_name": "Newbie",
        "avatar": "fox",
        "language": "en",
    }
    data.update(overrides)
    return data


def test_signup_page_lists_the_avatars(client, db):
    response = client.get(reverse("accounts:signup"), HTTP_ACCEPT_LANGUAGE="en")
    html = response.content.decode()
    assert response.status_code == 200
    assert html.count('type="radio" name="avatar"') >= 12
    assert "/avatars/fox.svg" in html


def test_signup_language_defaults_to_the_request_language(client, db):
    response = client.get(reverse("accounts:signup"), HTTP_ACCEPT_LANGUAGE="pt-BR")
    assert response.context["form"]["language"].initial == "pt-br"


def test_sign_up_creates_user_and_profile_and_signs_in(client, db):
    response = client.post(reverse("accounts:signup"), signup_data(), HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 302
    assert response["Location"] == "/"
    user = get_user_model().objects.get(username="newbie")
    assert user.check_password(PASSWORD)
    assert (user.profile.display_name, user.profile.avatar, user.profile.language) == (
        "Newbie",
        "fox",
        "en",
    )
    assert client.session["_auth_user_id"] == str(user.pk)


@pytest.mark.parametrize(
    ("display_name", "message"),
    [
        ("ThirteenChars", "at most 12 characters"),
        ("bad name", "Use only letters, digits"),
        ("héllo!", "Use only letters, digits"),
        ("TAKEN", "already taken"),
    ],
)
def test_sign_up_refuses_bad_display_names(client, make_user, display_name, message):
    make_user("someone", display_name="Taken")
    response = client.post(
        reverse("accounts:signup"),
        signup_data(display_name=display_name),
        HTTP_ACCEPT_LANGUAGE="en",
    )
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not get_user_model().objects.filter(username="newbie").exists()


def test_sign_up_message_is_translated(client, db):
    response = client.post(
        reverse("accounts:signup"),
        signup_data(display_name="ThirteenChars"),
        HTTP_ACCEPT_LANGUAGE="es",
    )
    assert "como máximo 12 caracteres" in response.content.decode()


def test_sign_up_refuses_an_avatar_outside_the_set(client, db):
    response = client.post(reverse("accounts:signup"), signup_data(avatar="unicorn"))
    assert response.status_code == 200
    assert response.context["form"].errors["avatar"]
    assert not Profile.objects.exists()


def test_sign_in_and_out(client, user):
    response = client.post(reverse("accounts:login"), {"username": "alice", "password": PASSWORD})
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(user.pk)
    assert client.get(reverse("accounts:logout")).status_code == 405  # POST only
    response = client.post(reverse("accounts:logout"))
    assert response.status_code == 302
    assert "_auth_user_id" not in client.session


def test_wrong_password_is_refused_with_a_message(client, user):
    response = client.post(
        reverse("accounts:login"),
        {"username": "alice", "password": "nope"},
        HTTP_ACCEPT_LANGUAGE="en",
    )
    assert response.status_code == 200
    assert "do not match" in response.content.decode()


def test_profile_requires_sign_in(client, db):
    response = client.get(reverse("accounts:profile"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("accounts:login"))


def test_profile_edit(client, make_user):
    user = make_user("alice", display_name="Alice")
    make_user("bob", display_name="Bob")
    client.force_login(user)
    response = client.get(reverse("accounts:profile"))
    assert response.status_code == 200
    assert "Alice" in response.content.decode()
    data = {"display_name": "BOB", "avatar": "owl", "language": "en"}
    response = client.post(reverse("accounts:profile"), data)
    assert response.status_code == 200
    assert response.context["form"].errors["display_name"]
    data["display_name"] = "  Alicia  "
    response = client.post(reverse("accounts:profile"), data)
    assert response.status_code == 302
    user.profile.refresh_from_db()
    assert (user.profile.display_name, user.profile.avatar, user.profile.language) == (
        "Alicia",
        "owl",
        "en",
    )


def test_password_change(client, user):
    client.force_login(user)
    new_password = "domino-Spinner-77"
    response = client.post(
        reverse("accounts:password_change"),
        {"old_password": PASSWORD, "new_password1": new_password, "new_password2": new_password},
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("accounts:password_change_done")
    user.refresh_from_db()
    assert user.check_password(new_password)
    assert client.get(reverse("accounts:password_change_done")).status_code == 200


def test_password_reset_mail_and_link(client, user):
    response = client.post(
        reverse("accounts:password_reset"),
        {"email": "alice@example.com"},
        HTTP_ACCEPT_LANGUAGE="en",
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("accounts:password_reset_done")
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["alice@example.com"]
    assert "Domino Club" in message.subject
    link = re.search(r"http://testserver(/accounts/password/reset/\S+/)", message.body).group(1)

    response = client.get(link)  # redirects to the ".../set-password/" form
    assert response.status_code == 302
    form_url = response["Location"]
    response = client.get(form_url)
    assert response.context["validlink"]
    new_password = "domino-Spinner-77"
    response = client.post(form_url, {"new_password1": new_password, "new_password2": new_password})
    assert response.status_code == 302
    assert response["Location"] == reverse("accounts:password_reset_complete")
    user.refresh_from_db()
    assert user.check_password(new_password)
    # The link works once.
    response = client.get(link, follow=True)
    assert not response.context["validlink"]


def test_password_reset_mail_is_in_the_request_language(client, user):
    client.post(
        reverse("accounts:password_reset"),
        {"email": "alice@example.com"},
        HTTP_ACCEPT_LANGUAGE="es",
    )
    assert "contraseña" in mail.outbox[0].subject.lower()


def test_password_reset_for_an_unknown_address_sends_nothing(client, db):
    response = client.post(reverse("accounts:password_reset"), {"email": "no@example.com"})
    assert response.status_code == 302
    assert mail.outbox == []


# Language ------------------------------------------------------------------------------------


def test_profile_language_wins_over_accept_language(client, make_user):
    user = make_user("alice", language="pt-br")
    client.force_login(user)
    response = client.get(reverse("home"), HTTP_ACCEPT_LANGUAGE="en")
    html = response.content.decode()
    assert "<title>Clube de Dominó</title>" in html
    assert response["Content-Language"] == "pt-br"


def test_profile_language_wins_over_the_language_cookie(client, make_user, settings):
    user = make_user("alice", language="en")
    client.force_login(user)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "es"
    response = client.get(reverse("home"), HTTP_ACCEPT_LANGUAGE="pt-br")
    assert "<title>Domino Club</title>" in response.content.decode()


def test_accept_language_applies_to_anonymous_visitors(client, db):
    response = client.get(reverse("accounts:login"), HTTP_ACCEPT_LANGUAGE="pt-br")
    assert "Entrar" in response.content.decode()
    response = client.get(reverse("home"), HTTP_ACCEPT_LANGUAGE="en")
    assert "<title>Domino Club</title>" in response.content.decode()


def test_profile_language_switcher(client, user):
    client.force_login(user)
    response = client.post(reverse("accounts:profile_language"), {"language": "en"})
    assert response.status_code == 302
    user.profile.refresh_from_db()
    assert user.profile.language == "en"
    response = client.get(reverse("accounts:profile"))
    assert "Your profile" in response.content.decode()


def test_site_language_switcher_updates_the_profile_of_a_signed_in_player(client, user):
    client.force_login(user)
    response = client.post(reverse("set_language"), {"language": "pt-br", "next": "/"})
    assert response.status_code == 302
    user.profile.refresh_from_db()
    assert user.profile.language == "pt-br"


def test_set_language_for_anonymous_visitors(client, db, settings):
    response = client.post(reverse("set_language"), {"language": "en", "next": "/"})
    assert response.status_code == 302
    assert client.cookies[settings.LANGUAGE_COOKIE_NAME].value == "en"
    response = client.get(reverse("home"), HTTP_ACCEPT_LANGUAGE="es")
    assert "<title>Domino Club</title>" in response.content.decode()


# Failed sign-ins -----------------------------------------------------------------------------


def _attempt(client, password, username="alice", language="en"):
    return client.post(
        reverse("accounts:login"),
        {"username": username, "password": password},
        HTTP_ACCEPT_LANGUAGE=language,
    )


def test_failed_sign_ins_are_locked_after_the_limit(client, user, settings):
    assert settings.AXES_FAILURE_LIMIT == 5
    for _attempt_number in range(settings.AXES_FAILURE_LIMIT - 1):
        response = _attempt(client, "wrong")
        assert response.status_code == 200
    response = _attempt(client, "wrong")  # the 5th failure locks
    assert response.status_code == 429
    assert "Too many failed sign-ins" in response.content.decode()
    assert "15 minutes" in response.content.decode()

    # The right password is refused while locked, with the message, and no session is made.
    response = _attempt(client, PASSWORD)
    assert response.status_code == 429
    assert "Too many failed sign-ins" in response.content.decode()
    assert "_auth_user_id" not in client.session

    # Case does not dodge the count.
    assert _attempt(client, PASSWORD, username="ALICE ").status_code == 429


def test_lockout_message_is_translated(client, user, settings):
    for _attempt_number in range(settings.AXES_FAILURE_LIMIT):
        response = _attempt(client, "wrong", language="pt-br")
    assert response.status_code == 429
    assert "Muitas tentativas" in response.content.decode()


def test_lockout_is_per_username_and_address(client, make_user, settings):
    make_user("alice")
    make_user("bob")
    for _attempt_number in range(settings.AXES_FAILURE_LIMIT):
        _attempt(client, "wrong")
    assert _attempt(client, PASSWORD).status_code == 429
    assert _attempt(client, PASSWORD, username="bob").status_code == 302
    other_address = client.post(
        reverse("accounts:login"),
        {"username": "alice", "password": PASSWORD},
        REMOTE_ADDR="10.0.0.9",
    )
    assert other_address.status_code == 302


def test_lockout_can_be_reset_and_expires(client, user, settings):
    for _attempt_number in range(settings.AXES_FAILURE_LIMIT):
        _attempt(client, "wrong")
    assert _attempt(client, PASSWORD).status_code == 429
    ratelimit.reset(username="alice")
    assert _attempt(client, PASSWORD).status_code == 302


def test_success_resets_the_count(client, user, settings):
    for _attempt_number in range(settings.AXES_FAILURE_LIMIT - 1):
        _attempt(client, "wrong")
    assert _attempt(client, PASSWORD).status_code == 302
    client.post(reverse("accounts:logout"))
    for _attempt_number in range(settings.AXES_FAILURE_LIMIT - 1):
        assert _attempt(client, "wrong").status_code == 200


def test_client_login_without_a_request_still_works(client, user):
    assert client.login(username="alice", password=PASSWORD)


# The profile page and seed 004's table options ---------------------------------------------


def _ids(html: str) -> list[str]:
    import re

    return re.findall(r'\bid="([^"]+)"', html)


def test_profile_page_has_one_language_control_besides_the_header(client, user):
    client.force_login(user)
    html = client.get(reverse("accounts:profile")).content.decode()
    ids = _ids(html)
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    assert html.count('name="language"') == 2  # the header's switch and the profile form's
    assert "accounts:profile_language" not in html and "/accounts/profile/language/" not in html


def test_account_pages_load_the_site_stylesheet_in_the_head(client, user):
    pages = [reverse("accounts:signup"), reverse("accounts:login")]
    for url in pages:
        head = client.get(url).content.decode().split("</head>")[0]
        assert "css/site.css" in head and "accounts/accounts.css" in head, url
    client.force_login(user)
    head = client.get(reverse("accounts:profile")).content.decode().split("</head>")[0]
    assert "css/site.css" in head and "accounts/accounts.css" in head


def test_table_options_are_saved_from_the_profile(client, user):
    client.force_login(user)
    page = client.get(reverse("accounts:profile")).content.decode()
    assert 'name="sounds"' in page and "checked" not in page.split('name="sounds"')[1][:40]
    response = client.post(reverse("accounts:table_options"), {
        "tile_size": "small", "game_speed": "slow", "sounds": "on", "auto_play": "on",
        "arrange_tiles": "", "bot_think_seconds": "2.5"})
    assert response.status_code == 302
    user.profile.refresh_from_db()
    p = user.profile
    assert (p.tile_size, p.game_speed, p.sounds, p.auto_play, p.arrange_tiles, p.bot_think_ms) \
        == ("small", "slow", True, True, False, 2500)
    assert not p.auto_pass and not p.learning_mode


def test_table_options_refuse_a_think_time_above_ten_seconds(client, user):
    client.force_login(user)
    response = client.post(reverse("accounts:table_options"), {
        "tile_size": "small", "game_speed": "slow", "bot_think_seconds": "11"})
    assert response.status_code == 200
    assert "error" in response.content.decode()
    user.profile.refresh_from_db()
    assert user.profile.bot_think_ms == 1000
