"""``{% table_chat %}``: the table page's chat box and report form (static/js/chat.js)."""

from django import template
from django.utils.translation import gettext as _

from apps.moderation.models import CHAT_MAX_LENGTH, Report

register = template.Library()


@register.inclusion_tag("moderation/_table_chat.html")
def table_chat():
    return {
        "max_length": CHAT_MAX_LENGTH,
        "reasons": Report.Reason.choices,
        "strings": {
            "placeholder": _("Say something to the table"),
            "players_only": _("Only the players at this table can chat."),
            "report_message": _("Report this message"),
            "the_table": _("The table"),
            "reported": _("Thanks: staff will look at your report."),
        },
    }
