from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from apps.tables.models import PRESET_CHOICES

from . import numbers


class StakeTableForm(forms.Form):
    entry = forms.TypedChoiceField(label=_("Entry"), coerce=int,
                                   choices=[(n, n) for n in numbers.STAKES])
    preset = forms.ChoiceField(label=_("Game"), choices=PRESET_CHOICES, initial="partners")
