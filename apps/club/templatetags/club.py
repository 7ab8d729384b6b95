from __future__ import annotations

from django import template

from apps.club import charts, selectors

register = template.Library()


@register.inclusion_tag("club/_profile_section.html", takes_context=True)
def club_section(context) -> dict:
    """The profile's coins, experience, level and last ledger rows."""
    user = context["request"].user
    return {"standing": selectors.standing(user), "csrf_token": context.get("csrf_token"),
            "rating_charts": charts.rating_charts(user)}
