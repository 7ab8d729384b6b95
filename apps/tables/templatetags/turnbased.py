"""Words of turn-based play in the pages: a game's name, and time left as a person reads it."""

from __future__ import annotations

from django import template
from django.utils.translation import gettext as _

from ..models import PRESET_CHOICES
from ..pace import move_time_label

register = template.Library()


@register.simple_tag
def preset_name(preset: str) -> str:
    return str(dict(PRESET_CHOICES).get(preset, preset))


@register.filter
def move_time(seconds: int | None) -> str:
    return move_time_label(seconds) if seconds else ""


@register.simple_tag
def time_left(seconds: int | None) -> str:
    return time_left_words(seconds)


def time_left_words(seconds: int | None) -> str:
    """"2 d 3 h", "5 h 20 min", "12 min", "40 s": the two largest units."""
    if seconds is None:
        return ""
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return _("%(d)d d %(h)d h") % {"d": days, "h": hours}
    if hours:
        return _("%(h)d h %(m)d min") % {"h": hours, "m": minutes}
    if minutes:
        return _("%(m)d min") % {"m": minutes}
    return _("%(s)d s") % {"s": secs}
