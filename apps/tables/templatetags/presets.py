"""``{% preset_about form.preset %}``: under a game menu, a line saying what each game is."""

from django import template

from apps.tables.models import PRESET_CHOICES, PRESET_DESCRIPTIONS

register = template.Library()


@register.inclusion_tag("tables/_preset_about.html")
def preset_about(field) -> dict:
    """Every game's line, named; static/js/presets.js then shows only the chosen game's."""
    return {"select_id": field.id_for_label,
            "presets": [(key, name, PRESET_DESCRIPTIONS[key]) for key, name in PRESET_CHOICES]}
