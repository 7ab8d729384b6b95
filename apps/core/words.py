"""Words a moderator would hide: insults, obscenities and slurs in the site's languages.

Used to refuse a table name before anyone sees it (``apps.tables.names``). Matching is by whole
word after folding case, accents and digit-for-letter spellings (``M3rd4`` is ``merda``), with
stretched letters (``fuuuck``) and spelled-out letters (``f.u.c.k``) folded too. Whole words,
because a word inside a longer one is usually innocent: ``puta`` is inside ``computador`` and
``disputa``, ``viado`` inside ``enviado``. The few in :data:`ANYWHERE` are found inside longer
words too (``fuckyou``), being inside no innocent word of es, pt or en.

Operators add words with the ``MODERATION_EXTRA_BLOCKED_WORDS`` setting (comma-separated in the
environment of the same name).
"""

from __future__ import annotations

import re
import unicodedata

from django.conf import settings

#: Whole words. Plurals and common spellings are listed: no stemming is done.
WORDS = frozenset("""
    fuck fucks fucker fuckers fucking motherfucker motherfuckers shit shits bullshit cunt cunts
    dick dicks cock cocks pussy pussies bitch bitches bastard bastards asshole assholes whore
    whores ass slut sluts wanker wankers twat twats nigger niggers nigga niggas faggot faggots fag
    fags retard retards rapist rapists nazi nazis hitler
    puta putas puto putos putita mierda mierdas cabron cabrones cabrona pendejo pendejos pendeja
    pendejas gilipollas verga vergas polla pollas chingar chinga chingada chingado marica
    maricas maricon maricones joto jotos zorra zorras culero culeros culo coño follar jodete
    malparido malparida hijoputa hijueputa
    caralho caralhos merda merdas buceta bucetas cu piroca pirocas viado viados arrombado
    arrombada cuzao otario otaria vagabunda foda foder fodase fodido fodida punheta punheteiro
    xota xoxota boquete fdp vsf pqp
""".split())

#: Found inside longer words too.
ANYWHERE = ("fuck", "nigger", "nigga", "faggot", "caralho", "buceta", "mierda", "gilipollas",
            "hijueputa", "hijodeputa", "filhodaputa", "filhadaputa", "putamadre", "chingad",
            "pendej", "arrombad", "punhet")

_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t",
                       "@": "a", "$": "s", "!": "i", "|": "i"})
#: What separates words; the symbols that stand for letters stay inside them.
_SPLIT = re.compile(r"[^\w@$!|]+")
_RUNS = re.compile(r"(.)\1+")


def fold(text: str) -> str:
    """Lower case and no accents, except that ñ stays a letter of its own (coño is not cono)."""
    out = []
    for char in unicodedata.normalize("NFC", text.casefold()):
        if char != "ñ":
            char = "".join(c for c in unicodedata.normalize("NFKD", char)
                           if not unicodedata.combining(c))
        out.append(char)
    return "".join(out)


def _squash(word: str) -> str:
    return _RUNS.sub(r"\1", word)


def _blocked() -> tuple[frozenset[str], dict[str, str], tuple[str, ...]]:
    extra = getattr(settings, "MODERATION_EXTRA_BLOCKED_WORDS", ()) or ()
    words = {fold(w.strip()).replace("-", "") for w in (*WORDS, *extra) if w.strip()}
    return frozenset(words), {_squash(w): w for w in words}, tuple(_squash(w) for w in ANYWHERE)


def _readings(raw: str) -> set[str]:
    """A word as written may use symbols for letters (``sh!t``) or as punctuation (``puta!``)."""
    return {raw.translate(_LEET), raw.strip("@$!|").translate(_LEET)} - {""}


def _words(text: str) -> list[set[str]]:
    """The readings of each word of ``text``, then of each run of one-letter words joined
    (``f u c k``, ``f.u.c.k``)."""
    raw = [t.replace("_", "") for t in _SPLIT.split(fold(text))]
    raw = [t for t in raw if t]
    out = [_readings(t) for t in raw]
    run: list[str] = []
    for token in [*raw, ""]:
        if len(token) == 1:
            run.append(token)
            continue
        if len(run) > 1:
            out.append(_readings("".join(run)))
        run = []
    return out


def blocked_word(text: str) -> str | None:
    """The first blocked word ``text`` contains, or None."""
    words, squashed, anywhere = _blocked()
    for readings in _words(text):
        for token in readings:
            if token in words:
                return token
            # Stretched letters ("fuuuck"), only for a token longer than the word: "as" (a
            # word in pt and en) must not match "ass".
            word = squashed.get(_squash(token))
            if word is not None and len(token) > len(word):
                return word
            flat = _squash(token)
            for stem in anywhere:
                if stem in flat:
                    return stem
    return None
