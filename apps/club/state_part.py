"""The club's part of a table's state: each seated person's rating, on their seat.

Built when seats change (``refresh_on``), with the label in every language of the site, so
that composing a frame needs neither a query nor a translation (apps.tables.state).
"""

from __future__ import annotations

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext as _

from apps.tables.state import PARTNER_PRESETS

from . import numbers
from .models import Rating

REFRESH_ON = frozenset({"seat", "match_started", "match_over"})


def rating_kind(table) -> str:
    partners = table.players == 4 and table.preset in PARTNER_PRESETS
    return Rating.Kind.PAIRS if partners else Rating.Kind.SOLO


def build(table, seats) -> dict:
    people = {s.user_id: s.index for s in seats if s.user_id is not None and not s.is_bot}
    if not people:
        return {}
    out: dict = {}
    for r in Rating.objects.filter(kind=rating_kind(table), user_id__in=list(people)):
        provisional = r.matches < numbers.RATING_PROVISIONAL_MATCHES
        labels = {}
        for lang, _name in settings.LANGUAGES:
            with translation.override(lang):
                labels[lang] = (_("Rating %(rating)d, provisional") if provisional
                                else _("Rating %(rating)d")) % {"rating": r.shown}
        out[str(people[r.user_id])] = {"rating": r.shown, "provisional": provisional,
                                       "labels": labels}
    return out


def compose(data: dict, state: dict, viewer) -> None:
    for seat in state["seats"]:
        mine = data.get(str(seat["index"]))
        if mine is not None:
            seat["rating"] = mine["rating"]
            seat["rating_provisional"] = mine["provisional"]
            seat["rating_label"] = mine["labels"].get(viewer.language) \
                or next(iter(mine["labels"].values()))
