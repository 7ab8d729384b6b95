"""``{% fairplay_table %}``: on the table page, the host's minimum share (its control for the
host before the match starts, the condition for everyone else)."""

from __future__ import annotations

from django import template

from apps.fairplay import rules, selectors
from apps.tables.models import Table

register = template.Library()


@register.inclusion_tag("fairplay/_table.html", takes_context=True)
def fairplay_table(context) -> dict:
    table = context["table"]
    if table.practice:
        return {"show": False}
    minimum = selectors.table_minimum(table.pk)
    may_set = (context.get("is_host") and not table.quick
               and table.state == Table.State.WAITING)
    return {
        "show": bool(minimum or may_set), "table": table, "minimum": minimum,
        "minimum_words": selectors.minimum_words(minimum) if minimum else "",
        "may_set": may_set, "few": rules.MATCHES_TO_JUDGE,
        "csrf_token": context.get("csrf_token"),
    }
