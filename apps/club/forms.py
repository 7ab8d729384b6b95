from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from apps.tables.models import PRESET_CHOICES

from . import numbers


class StakeTableForm(forms.Form):
    entry = forms.TypedChoiceField(label=_("Entry"), coerce=int,
                                   choices=[(n, n) for n in numbers.STAKES])
    preset = forms.ChoiceField(label=_("Game"), choices=PRESET_CHOICES, initial="partners")
    players = forms.TypedChoiceField(
        label=_("Players"), coerce=int, initial=4, choices=[(4, "4"), (3, "3"), (2, "2")],
        help_text=_("Only draw, block, all fives and tranca may have 2 or 3 players."))
