"""The pages of a wrong address and of a failure, in the visitor's language: a 404 that leads
back to the lobby, a 503 "back in a moment" while PostgreSQL or Redis is away (drawn without
the database), and a 500 for our own bugs."""

from __future__ import annotations

import pytest
from django.db import OperationalError
from redis.exceptions import ConnectionError as RedisConnectionError

from apps.tables import selectors

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("language,title", [("es", "Página no encontrada"),
                                            ("pt-br", "Página não encontrada"),
                                            ("en", "Page not found")])
def test_a_wrong_address_gets_the_sites_own_404(client, language, title):
    response = client.get("/t/NOPE99/nothing/here/", HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 404
    html = response.content.decode()
    assert f"<h1>{title}</h1>" in html and 'href="/lobby/"' in html
    assert f'<html lang="{language}">' in html


def broken(err):
    def lobby_rows():
        raise err
    return lobby_rows


@pytest.mark.parametrize("err", [
    OperationalError("connection failed: server closed the connection unexpectedly"),
    RedisConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused."),
], ids=["postgres", "redis"])
def test_an_outage_is_a_503_that_says_come_back(client, monkeypatch, err):
    monkeypatch.setattr(selectors, "lobby_rows", broken(err))
    client.raise_request_exception = False
    response = client.get("/lobby/", HTTP_ACCEPT_LANGUAGE="es")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    html = response.content.decode()
    assert "<h1>Volvemos en un momento</h1>" in html
    assert "Algo falló" not in html


def test_a_bug_is_a_500_in_the_visitors_language(client, monkeypatch):
    monkeypatch.setattr(selectors, "lobby_rows", broken(RuntimeError("a bug")))
    client.raise_request_exception = False
    response = client.get("/lobby/", HTTP_ACCEPT_LANGUAGE="pt-br")
    assert response.status_code == 500 and "Retry-After" not in response
    html = response.content.decode()
    assert "<h1>Algo deu errado</h1>" in html and "Voltamos" not in html


def test_an_error_page_that_cannot_be_drawn_still_answers(client, monkeypatch):
    from django.template import loader

    def missing(name, *args, **kwargs):
        raise ValueError("Missing staticfiles manifest entry for 'favicon.svg'")

    monkeypatch.setattr(selectors, "lobby_rows", broken(OperationalError("gone")))
    monkeypatch.setattr(loader, "get_template", missing)
    client.raise_request_exception = False
    response = client.get("/lobby/", HTTP_ACCEPT_LANGUAGE="es")
    assert response.status_code == 503
    assert "<p>Volvemos en un momento</p>" in response.content.decode()
