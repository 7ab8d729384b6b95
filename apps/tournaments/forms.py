from __future__ import annotations

from datetime import UTC

from django import forms
from django.utils.translation import gettext_lazy as _

from apps.tables.models import PRESET_CHOICES
from apps.tables.pace import move_seconds_choices, move_time_label

from .models import Tournament

TURN_CHOICES = [("", _("No limit")), ("15", "15 s"), ("30", "30 s"), ("45", "45 s"),
                ("60", "60 s"), ("90", "90 s")]


class TournamentForm(forms.Form):
    """The creation form: the service checks every value again (and says why it refuses)."""

    name = forms.CharField(label=_("Name"), max_length=40)
    preset = forms.ChoiceField(label=_("Game"), choices=PRESET_CHOICES, initial="partners")
    players = forms.TypedChoiceField(
        label=_("Played"), coerce=int, initial=4,
        choices=[(4, _("in pairs (four players)")), (2, _("one-on-one (two players)"))],
        help_text=_("Pairs: partners, partners with the 6-6, pairs series, tranca. "
                    "One-on-one: draw, block, all fives, tranca."))
    format = forms.ChoiceField(label=_("Format"), choices=Tournament.Format.choices,
                               initial=Tournament.Format.SWISS)
    rounds = forms.IntegerField(label=_("Rounds (Swiss)"), min_value=1, max_value=9,
                                initial=3)
    best_of = forms.TypedChoiceField(label=_("Each knockout tie is best of"), coerce=int,
                                     initial=1, choices=[(1, "1"), (3, "3"), (5, "5")])
    starts_at = forms.DateTimeField(
        label=_("Starts at (UTC)"), input_formats=["%Y-%m-%dT%H:%M"],
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"))
    turn_seconds = forms.TypedChoiceField(label=_("Time per move"), choices=TURN_CHOICES,
                                          coerce=int, empty_value=None, required=False,
                                          initial="45")
    move_seconds = forms.TypedChoiceField(
        label=_("Pace"), coerce=int, empty_value=None, required=False, choices=(),
        help_text=_("Turn-based: every table is turn-based, a round lasts as long as its "
                    "matches need, and a person whose first time per move runs out without a "
                    "move of theirs loses the game for their team."))
    target = forms.IntegerField(label=_("Points to win a match"), required=False,
                                min_value=1, max_value=1000,
                                help_text=_("Empty: the game's own."))
    entry = forms.IntegerField(label=_("Entry (coins per person, 0: free)"), min_value=0,
                               initial=0)
    prize_split = forms.CharField(label=_("Prizes (percent of the pot per place)"),
                                  initial="60, 30, 10",
                                  help_text=_("From first place down, adding up to 100."))
    prize_added = forms.IntegerField(label=_("Coins the club adds to the prizes"),
                                     min_value=0, initial=0, required=False)
    max_teams = forms.IntegerField(label=_("Most teams"), min_value=2, max_value=64,
                                   initial=16)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["move_seconds"].choices = [("", _("Live"))] + [
            (s, _("Turn-based, %(time)s") % {"time": move_time_label(s)})
            for s in move_seconds_choices()]

    def clean_starts_at(self):
        moment = self.cleaned_data["starts_at"]
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment

    def clean_prize_split(self) -> list[int]:
        try:
            return [int(part) for part in self.cleaned_data["prize_split"].replace(";", ",")
                    .split(",") if part.strip()]
        except ValueError:
            raise forms.ValidationError(_("Write whole percents separated by commas, such as "
                                          "60, 30, 10.")) from None

    def clean_prize_added(self) -> int:
        return self.cleaned_data.get("prize_added") or 0


class RegisterForm(forms.Form):
    partner = forms.CharField(label=_("Your partner's name"), max_length=40, required=False)
    find_partner = forms.BooleanField(label=_("Find me a partner"), required=False)
