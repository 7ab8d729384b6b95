"""Table names, checked like display names: a length, a set of characters, and none of the
words a moderator would hide (``apps.core.words``).

A name may have spaces and a little punctuation that display names may not ("Mesa de Ana",
"Ana's table!"); an empty name means the table has none and pages show its code.
"""

from __future__ import annotations

import unicodedata

from django.utils.translation import gettext as _

from apps.core.words import blocked_word

#: The Table.name column's length.
TABLE_NAME_MAX_LENGTH = 40
PUNCTUATION = " ._-'’!?&#,()"


def normalize_table_name(name: str) -> str:
    """Composed Unicode, inner runs of whitespace made one space, none around."""
    return " ".join(unicodedata.normalize("NFC", name or "").split())


def table_name_problem(name: str) -> str | None:
    """Why ``name`` (already normalized) cannot name a table, in the active language; None
    when it can."""
    if not name:
        return None
    if len(name) > TABLE_NAME_MAX_LENGTH:
        return _("A table name can have at most %(limit)d characters (this one has "
                 "%(length)d).") % {"limit": TABLE_NAME_MAX_LENGTH, "length": len(name)}
    if not all(c.isalnum() or c in PUNCTUATION for c in name) \
            or not any(c.isalnum() for c in name):
        return _("Use letters and digits in a table name, with spaces and . _ - ' ! ? & # , "
                 "( ) between them.")
    if blocked_word(name) is not None:
        return _("Choose another table name: this one has a word the club does not allow.")
    return None


def seat_names(names: list[str], bots: list[bool]) -> list[str]:
    """Each seat's name in the active language: a person's own, and for bots "Bot" when one
    sits at the table, "Bot 1", "Bot 2"... in seat order when several do, so that a move, a
    score line and a replay say which bot; an empty seat's stays empty."""
    numbered = sum(bots) > 1
    out, count = [], 0
    for name, bot in zip(names, bots, strict=True):
        if name or not bot:
            out.append(name)
            continue
        count += 1
        out.append(_("Bot %(number)d") % {"number": count} if numbered else _("Bot"))
    return out
