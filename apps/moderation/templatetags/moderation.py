"""``{% table_chat %}``: the table page's chat box, quick phrases and report form
(static/js/chat.js); for the host, the switch that lets watchers use the phrases."""

from django import template
from django.utils.translation import gettext as _

from apps.moderation import phrases
from apps.moderation.models import CHAT_MAX_LENGTH, Report
from apps.moderation.selectors import watcher_phrases_allowed

register = template.Library()


@register.inclusion_tag("moderation/_table_chat.html", takes_context=True)
def table_chat(context):
    table = context.get("table")
    host = bool(context.get("is_host")) and table is not None and table.state != "closed"
    return {
        "max_length": CHAT_MAX_LENGTH,
        "reasons": Report.Reason.choices,
        "phrases": phrases.menu(),
        "table": table,
        "host_switch": host,
        "watcher_phrases": host and watcher_phrases_allowed(table.pk),
        "csrf_token": context.get("csrf_token"),
        "strings": {
            "placeholder": _("Say something to the table"),
            "players_only": _("Only the players at this table can chat."),
            "report_message": _("Report this message"),
            "the_table": _("The table"),
            "reported": _("Thanks: staff will look at your report."),
        },
    }
