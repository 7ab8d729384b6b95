"""Quick-chat phrases: a short fixed menu of table talk, by stable id.

A phrase is stored as its id (``ChatMessage.phrase``) with its English words as the text (what
staff pages and the log show), and each person reads it in their own language: the table's
snapshot carries every phrase it holds in every site language, and composing a state picks the
viewer's (no translation there). The words are marked here and translated where a snapshot is
built (:func:`texts`), so a phrase said in Spanish reads "Boa!" to a Brazilian at the table.

The ids are part of the socket protocol (docs/protocol.md): never renumber or reuse one.
"""

from __future__ import annotations

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop, pgettext_lazy

#: id -> the phrase's English words (msgid). Reactions are emoji: the same in every language.
PHRASES: dict[str, str] = {
    "good_one": gettext_noop("Good one!"),
    "i_pass": gettext_noop("I pass"),
    "capicua": gettext_noop("Capicua!"),
    "thanks_partner": gettext_noop("Thanks, partner"),
    "good_game": gettext_noop("Good game"),
    "lucky": gettext_noop("What luck!"),
    "hurry": gettext_noop("A bit faster, please"),
    "well_played": gettext_noop("Well played"),
    "clap": "👏",
    "laugh": "😂",
    "pray": "🙏",
}

#: What a screen reader says for a reaction's button (the emoji alone reads oddly, if at all).
REACTION_LABELS = {
    "clap": pgettext_lazy("quick chat reaction", "Applause"),
    "laugh": pgettext_lazy("quick chat reaction", "Laughing"),
    "pray": pgettext_lazy("quick chat reaction", "Thank you (hands together)"),
}


def is_phrase(phrase_id: object) -> bool:
    return isinstance(phrase_id, str) and phrase_id in PHRASES


def text_in(phrase_id: str, language: str) -> str:
    """The phrase's words in ``language``."""
    with translation.override(language):
        return _(PHRASES[phrase_id]) if phrase_id not in REACTION_LABELS else PHRASES[phrase_id]


def texts(phrase_id: str) -> dict[str, str]:
    """The phrase's words in every language the site speaks, for a snapshot."""
    return {lang: text_in(phrase_id, lang) for lang, _name in settings.LANGUAGES}


def menu() -> list[dict]:
    """The table page's phrase buttons, in the active language."""
    return [{"id": pid, "text": _(words) if pid not in REACTION_LABELS else words,
             "label": str(REACTION_LABELS.get(pid, "")), "reaction": pid in REACTION_LABELS}
            for pid, words in PHRASES.items()]
