"""The header's language menu names every language in that language, whatever the page's
(someone who cannot read the page still finds their own), and marks each name with its
language, so that a screen reader says it right."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

#: Each option as it must read on every page: value, lang attribute, name.
OPTIONS = [("es", "es", "Español"), ("pt-br", "pt-br", "Português (Brasil)"),
           ("en", "en", "English")]


def menu(html: str) -> list[tuple[str, str, str]]:
    select = re.search(r'<select id="language-select".*?</select>', html, re.S).group(0)
    return [(value, lang, name.strip()) for value, lang, name in re.findall(
        r'<option value="([^"]+)" lang="([^"]+)"[^>]*>([^<]*)</option>', select)]


@pytest.mark.parametrize("language", ["es", "pt-br", "en"])
def test_the_language_menu_names_each_language_in_its_own(client, db, language):
    html = client.get(reverse("home"), HTTP_ACCEPT_LANGUAGE=language).content.decode()
    assert menu(html) == OPTIONS
    assert re.search(rf'<option value="{language}" lang="{language}" selected>', html)


def test_a_spanish_page_offers_english_not_ingles(client, db):
    html = client.get(reverse("tables:lobby"), HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert '<html lang="es">' in html and "Sala" in html
    assert ">English<" in html and "Inglés" not in html and "Portugués" not in html


def test_the_error_page_keeps_the_menu(rf, settings):
    """The 500 page is drawn without the request's context: the menu must not depend on it."""
    from apps.core.views import server_error

    html = server_error(rf.get("/")).content.decode()
    assert menu(html) == OPTIONS
