"""``{% notification_bell %}``: the bell with the unread count, on every page
(templates/base.html), kept live by ``static/js/site.js`` over ``ws/me/``."""

from __future__ import annotations

from django import template

from apps.notifications import selectors

register = template.Library()


@register.inclusion_tag("notifications/_bell.html", takes_context=True)
def notification_bell(context) -> dict:
    request = context.get("request")
    user = getattr(request, "user", None)
    shown = user is not None and user.is_authenticated
    return {"shown": shown, "unread": selectors.unread_count(user.pk) if shown else 0}
