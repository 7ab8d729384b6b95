"""The engine's refusals in the player's language.

The engine speaks English with a stable ``key`` and parameters; this table is the only place the
site turns those into words, so every refusal a player sees is translatable.
"""

from __future__ import annotations

from django.utils.translation import gettext as _

from apps.rules.errors import RuleError


def _templates() -> dict[str, str]:
    return {
        "not_your_turn": _("It is not your turn."),
        "round_over": _("This round is already over."),
        "not_in_hand": _("You do not hold %(tile)s."),
        "not_a_tile": _("“%(tile)s” is not a domino tile: tiles are written like 6-3."),
        "must_open_with": _("This round must open with %(need)s."),
        "wrong_end": _("%(tile)s does not fit that end."),
        "fits_no_end": _("%(tile)s fits neither end (%(ends)s)."),
        "end_required": _("%(tile)s fits more than one end: choose one."),
        "must_play": _("You cannot pass: %(tile)s can be played."),
        "players_exactly_four": _("This game is played by exactly four players."),
        "players_required": _("Say how many players (2 to 4)."),
        "players_range": _("This game is played by 2 to 4 players."),
        "not_a_number": _("Enter a whole number."),
        "target_choices": _("The target is 50, 100 or 150 points."),
        "target_range": _("The target must be between %(low)s and %(high)s points, "
                          "in steps of %(step)s."),
        "hand_size_choices": _("Deal 5 or 7 tiles to each player."),
        "hand_size_fixed": _("This game deals %(size)s tiles each; the hand size cannot change."),
        "too_many_tiles": _("That many hands need more than 28 tiles."),
        "turn_seconds_range": _("The turn time is from 1 to %(high)s seconds, or no limit."),
        "best_of_choices": _("A series is best of 1, 3 or 5 games."),
        "tie_choices": _("Choose one of the tie rules offered."),
        "option_not_in_preset": _("This game has no such option."),
        "unknown_option": _("Unknown option."),
        "unknown_preset": _("Unknown game."),
    }


def rule_message(err: RuleError) -> str:
    template = _templates().get(err.key)
    if template is None:
        return err.message
    try:
        return template % err.params
    except (KeyError, TypeError, ValueError):
        return template
