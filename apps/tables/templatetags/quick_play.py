"""``{% quick_play as qp %}``: what the "Play now" section (``tables/_quick_play.html``) needs,
so that the page including it (the home page) needs nothing in its own view."""

from django import template
from django.conf import settings

from apps.tables.forms import FOUR_ONLY, QuickPlayForm

register = template.Library()


@register.simple_tag
def quick_play() -> dict:
    return {
        # Ids of their own: the home page has other forms with a game and players.
        "form": QuickPlayForm(auto_id="quick_%s"),
        # The games without a choice of players: static/js/quick_play.js hides the field.
        "four_only": " ".join(FOUR_ONLY),
        "fill_seconds": int(settings.QUICK_PLAY_FILL_SECONDS),
    }
