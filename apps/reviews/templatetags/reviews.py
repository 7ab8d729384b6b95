"""``{% match_review %}``: on the replay page, the review's part, for the people who played the
match (nothing for anyone else): the button, the bar, and what ``static/js/review.js`` draws."""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _

from apps.reviews import selectors, services, words

register = template.Library()


@register.inclusion_tag("reviews/_panel.html", takes_context=True)
def match_review(context) -> dict:
    table, match = context["table"], context["match"]
    user = context["request"].user
    if not services.may_review(match, user):
        return {"show": False}
    seats = [s.index(user.pk) if user.pk in s else None for s in selectors.seat_users(match)]
    return {
        "show": True, "table": table, "match": match,
        "csrf_token": context.get("csrf_token"),
        "mine": {"seats": seats, "sides": selectors.sides_of(match, user)},
        "strings": strings(),
    }


def strings() -> dict:
    """Every word review.js shows, in the page's language."""
    return {
        "ask": _("Review my moves"),
        "asking": _("Asking for the review…"),
        "again": _("Review again"),
        "unreachable": _("The review could not be reached; trying again…"),
        "agrees": _("The bot agrees."),
        "forced": _("The only move there was."),
        "close": _("A good move: %(points)s points behind the bot's choice."),
        "inaccuracy": _("Inaccuracy: %(points)s points given up (%(sure)s sure)."),
        "mistake": _("Mistake: %(points)s points given up (%(sure)s sure)."),
        "blunder": _("Blunder: %(points)s points given up (%(sure)s sure)."),
        "mark_inaccuracy": _("inaccuracy"),
        "mark_mistake": _("mistake"),
        "mark_blunder": _("blunder"),
        "move_accuracy": _("Accuracy of this move: %(accuracy)s."),
        "accuracy_title": _("accuracy"),
        "players_title": _("Accuracy in this match"),
        "player_accuracy": _("%(name)s: %(accuracy)s over %(judged)s choices"),
        "player_no_choice": _("%(name)s: no choice to make"),
        "count_blunders": _("blunders: %(n)s"),
        "count_mistakes": _("mistakes: %(n)s"),
        "count_inaccuracies": _("inaccuracies: %(n)s"),
        "bot_plays": _("The bot plays %(tile)s on the %(number)s."),
        "bot_opens": _("The bot opens with %(tile)s."),
        "bot_plays_tile": _("The bot plays %(tile)s."),
        "bot_passes": _("The bot passes."),
        "verdict_of": _("Move %(n)s, %(name)s: %(verdict)s"),
        "verdict_none": _("Step through the moves to read each one's verdict."),
        "not_judged": _("This move was not judged."),
        "your_side": _("your side"),
        "chart_title": _("Expected points for %(side)s through round %(n)s"),
        "chart_about": _("Each point is one of your side's moves: what the side could still "
                         "expect from the round as its player saw it then (its points to come "
                         "minus the others'). Dark red and larger: a blunder; red: a mistake; "
                         "amber: an inaccuracy."),
        "chart_partner": _("Solid line: your moves; dashed: your partner's."),
        "chart_move": _("Move %(n)s"),
        "summary_title": _("Round %(n)s in words"),
        "costly_title": _("Costly moves of round %(n)s"),
        "no_costly": _("No costly move in this round."),
        "costly_line": _("Move %(n)s, %(name)s played %(tile)s: %(mark)s, %(points)s points."),
        "passed": _("a pass"),
    }


#: Where each number's pips sit on a half of a tile, in a 3 x 3 grid (column, row).
PIPS = {0: [], 1: [(1, 1)], 2: [(0, 0), (2, 2)], 3: [(0, 0), (1, 1), (2, 2)],
        4: [(0, 0), (2, 0), (0, 2), (2, 2)], 5: [(0, 0), (2, 0), (1, 1), (0, 2), (2, 2)],
        6: [(0, 0), (2, 0), (0, 1), (2, 1), (0, 2), (2, 2)]}


@register.simple_tag
def domino(name: str, size: int = 28) -> str:
    """A tile ("6-4") drawn as an inline SVG (presentation attributes and classes only, no
    style attribute: the site's CSP forbids inline styles). Its words are for screen readers."""
    try:
        a, b = (int(v) for v in str(name).split("-"))
    except ValueError:
        return ""
    if not (0 <= a <= 6 and 0 <= b <= 6):
        return str(name)
    half, step = 20, 6
    circles = []
    for offset, value in ((0, a), (half, b)):
        for col, row in PIPS.get(value, []):
            circles.append(f'<circle class="pip" cx="{offset + 4 + col * step}" '
                           f'cy="{4 + row * step}" r="1.9"/>')
    width = size * 2
    return format_html(
        '<svg class="domino" viewBox="0 0 40 20" width="{}" height="{}" role="img" '
        'aria-label="{}"><rect x="0.5" y="0.5" width="39" height="19" rx="3"/>'
        '<line x1="20" y1="3" x2="20" y2="17"/>{}</svg>',
        width, size, words.tile_words(name), mark_safe("".join(circles)))  # noqa: S308 (ints)
