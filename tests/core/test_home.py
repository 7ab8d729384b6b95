import pytest
from django.urls import reverse

TITLES = {
    "es": "Club de Dominó",
    "pt-br": "Clube de Dominó",
    "en": "Domino Club",
}


@pytest.mark.parametrize("language", TITLES)
def test_home_is_translated_from_accept_language(client, db, language):
    # db: the home page lists the lobby's public tables, for visitors too.
    response = client.get(reverse("home"), HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200
    html = response.content.decode()
    assert f"<title>{TITLES[language]}</title>" in html
    assert f'<html lang="{language}">' in html
    assert response["Content-Language"] == language


def test_home_falls_back_to_default_language(client, db, settings):
    response = client.get(reverse("home"), HTTP_ACCEPT_LANGUAGE="de")
    assert response.status_code == 200
    assert response["Content-Language"] == settings.LANGUAGE_CODE


def test_static_css_is_served(client):
    response = client.get("/static/css/site.css")
    assert response.status_code == 200
