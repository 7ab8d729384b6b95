"""The games' names and one-line descriptions (rules.md's presets), in every language.

"Parejas (abre el 6-6)" above "Parejas, se abre con 6-6": nobody could tell `partners` from
`partners-66`. A name says what sets its game apart; a line under every game menu says the
rest (who opens, the tie rule, the target)."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.utils import translation

from apps.rules.presets import PRESETS
from apps.tables.models import PRESET_CHOICES, PRESET_DESCRIPTIONS

LANGUAGES = [code for code, _name in settings.LANGUAGES]
SIX_SIX = re.compile(r"6\s*-\s*6|6-6|doble seis|double six|carroç\w* de sei?s", re.I)


def names(language: str) -> dict[str, str]:
    with translation.override(language):
        return {key: str(label) for key, label in PRESET_CHOICES}


def descriptions(language: str) -> dict[str, str]:
    with translation.override(language):
        return {key: str(text) for key, text in PRESET_DESCRIPTIONS.items()}


@pytest.mark.parametrize("language", LANGUAGES)
def test_game_names_are_pairwise_distinct(language):
    shown = names(language)
    assert list(shown) == list(PRESETS)
    folded = [re.sub(r"\W+", " ", n).strip().casefold() for n in shown.values()]
    assert len(set(folded)) == len(folded), shown


@pytest.mark.parametrize("language", LANGUAGES)
def test_only_the_game_that_must_open_with_the_6_6_names_it(language):
    """Both partners games hand the first round to the holder of the 6-6; only in
    `partners-66` must that tile be the first played. A name naming the 6-6 is that game."""
    shown = names(language)
    naming = [key for key, name in shown.items() if SIX_SIX.search(name)]
    assert naming == ["partners-66"], shown


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_game_has_a_description(language):
    shown = descriptions(language)
    assert list(shown) == list(PRESETS)
    assert all(text.strip() for text in shown.values()), shown
    assert len(set(shown.values())) == len(shown)
    if language != "en":  # English is the msgid: every other language has its own words
        english = descriptions("en")
        assert not [k for k in shown if shown[k] == english[k]], language
        assert not [k for k, v in names(language).items() if v == names("en")[k]
                    and k != "tranca"], language  # "Tranca" is its name everywhere


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_two_partners_games_say_how_they_differ(language):
    """rules.md: who opens with what, the exact tie when blocked, and the target."""
    shown = descriptions(language)
    for key, target in (("partners", "100"), ("partners-66", "50")):
        assert SIX_SIX.search(shown[key]) and target in shown[key], (key, shown[key])
    assert shown["partners"] != shown["partners-66"]


def menus(html: str) -> dict[str, dict]:
    """Every game menu on a page: its options' names, and the lines under it by game."""
    out = {}
    for select_id, options in re.findall(r'<select name="preset"[^>]*id="([^"]+)"[^>]*>(.*?)'
                                         r"</select>", html, re.S):
        about = re.search(rf'<ul class="preset-about" id="{select_id}_about" '
                          rf'data-for="{select_id}">(.*?)</ul>', html, re.S)
        out[select_id] = {
            "names": dict(re.findall(r'<option value="([^"]+)"[^>]*>([^<]*)</option>', options)),
            "about": dict(re.findall(r'<li data-preset="([^"]+)">(?:<span[^>]*>.*?</span>)?'
                                     r"([^<]*)</li>", about.group(1))) if about else {},
        }
    return out


@pytest.mark.django_db
@pytest.mark.parametrize("language", LANGUAGES)
def test_every_game_menu_uses_the_same_names_and_describes_each_game(client, make_user,
                                                                     language):
    from html import unescape

    user = make_user("ana")
    user.profile.language = language
    user.profile.save()
    client.force_login(user)
    expected_names, expected_about = names(language), descriptions(language)
    found = {}
    for path in ("/", "/tables/new/", "/club/stakes/"):
        page = client.get(path)
        assert page.status_code == 200, path
        for select_id, menu in menus(page.content.decode()).items():
            found[f"{path} #{select_id}"] = menu
            assert {k: unescape(v) for k, v in menu["names"].items()} == expected_names, path
            assert {k: unescape(v).strip() for k, v in menu["about"].items()} == \
                expected_about, (path, select_id)
    # The home page's practice and "Play now" menus, the create page's, the stake tables'.
    assert sorted(found) == ["/ #id_preset", "/ #quick_preset", "/club/stakes/ #id_preset",
                             "/tables/new/ #id_preset"], sorted(found)
