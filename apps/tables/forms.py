"""Forms of the table pages. They check types; the service layer checks the rules."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from apps.rules.presets import TIE_RULES

from .models import BOT_LEVELS, PRESET_CHOICES
from .names import TABLE_NAME_MAX_LENGTH, normalize_table_name, table_name_problem
from .pace import (
    LIVE,
    PACE_CHOICES,
    TIMEOUTS_DEFAULT,
    TIMEOUTS_MAX,
    TIMEOUTS_MIN,
    TURN,
    move_seconds_choices,
    move_time_label,
)

TIE_LABELS = {
    "closer_loses": _("the side that placed the last tile loses"),
    "opener_loses": _("the pair that opened the round loses"),
    "replay": _("nobody scores and the round is replayed"),
}

#: What each preset lets the host choose, shown next to the form (rules.md).
PRESET_HELP = {
    "partners": _("4 players in pairs. Target 50 to 500 in steps of 50 (default 100). "
                  "Turn time 45 s by default."),
    "partners-66": _("4 players in pairs; the first round opens with 6-6. Target 50 to 500 in "
                     "steps of 50 (default 50)."),
    "draw": _("2 to 4 players; a stuck player draws. Target 1 to 1000 (default 100 with 2 "
              "players, 61 with 3 or 4)."),
    "block": _("2 to 4 players; no drawing. Target 1 to 1000 (default 100 with 2 players, 61 "
               "with 3 or 4)."),
    "all-fives": _("2 to 4 players; open ends that add up to a multiple of 5 score. Target 1 to "
                   "1000 (default 150)."),
    "tranca": _("2 to 4 players. Target 50, 100 or 150 (default 100); hands of 5 or 7 tiles."),
    "pairs-series": _("4 players in pairs, a series of games. Target 50 to 500 in steps of 50 "
                      "(default 300); best of 1, 3 or 5; a tie rule for blocked rounds."),
}


FOUR_ONLY = ("partners", "partners-66", "pairs-series")


class CodeForm(forms.Form):
    code = forms.CharField(label=_("Invite code"), max_length=20,
                           widget=forms.TextInput(attrs={"autocomplete": "off",
                                                         "autocapitalize": "characters",
                                                         "placeholder": "ABC234"}))


class InviteForm(forms.Form):
    display_name = forms.CharField(label=_("Invite a player by display name"), max_length=60)


def table_name_field() -> forms.CharField:
    return forms.CharField(
        label=_("Table name"), required=False,
        widget=forms.TextInput(attrs={"maxlength": TABLE_NAME_MAX_LENGTH, "autocomplete": "off"}),
        help_text=_("Optional. Shown in the lobby and on the table page."))


def clean_table_name(value: str) -> str:
    """The service's own check, so that the error shows next to the field."""
    name = normalize_table_name(value)
    problem = table_name_problem(name)
    if problem is not None:
        raise forms.ValidationError(problem, code="bad_name")
    return name


class TableNameForm(forms.Form):
    name = table_name_field()


class CreateTableForm(forms.Form):
    name = table_name_field()
    preset = forms.ChoiceField(label=_("Game"), choices=PRESET_CHOICES, initial="partners")
    players = forms.TypedChoiceField(
        label=_("Players"), required=False, coerce=int, empty_value=None,
        choices=[("", _("4 (or the game's number)")), ("2", "2"), ("3", "3"), ("4", "4")],
        help_text=_("Only draw, block, all fives and tranca may have 2 or 3 players."))
    target = forms.IntegerField(label=_("Target (points)"), required=False, min_value=1,
                                max_value=1000,
                                help_text=_("Empty: the game's default."))
    hand_size = forms.TypedChoiceField(
        label=_("Tiles per hand (tranca)"), required=False, coerce=int, empty_value=None,
        choices=[("", _("Default")), ("5", "5"), ("7", "7")])
    best_of = forms.TypedChoiceField(
        label=_("Best of (pairs series)"), required=False, coerce=int, empty_value=None,
        choices=[("", _("Default (1)")), ("1", "1"), ("3", "3"), ("5", "5")])
    tie = forms.ChoiceField(
        label=_("When a blocked round ties (pairs series)"), required=False,
        choices=[("", _("Default"))] + [(t, TIE_LABELS[t]) for t in TIE_RULES])
    turn_seconds = forms.IntegerField(
        label=_("Seconds per move"), required=False, min_value=1, max_value=3600, initial=45,
        help_text=_("1 to 3600; empty for no time limit."))
    pace = forms.ChoiceField(
        label=_("Pace"), choices=PACE_CHOICES, initial=LIVE, widget=forms.RadioSelect,
        required=False,
        help_text=_("Live: everyone plays now. Turn-based: each person moves when they can, "
                    "within the time per move; the table waits for them."))
    move_seconds = forms.TypedChoiceField(
        label=_("Time per move (turn-based)"), required=False, coerce=int, empty_value=None,
        choices=())
    timeouts_to_standin = forms.TypedChoiceField(
        label=_("Timeouts in a row before a bot takes the seat (turn-based)"), coerce=int,
        required=False, empty_value=TIMEOUTS_DEFAULT,
        choices=[(n, str(n)) for n in range(TIMEOUTS_MIN, TIMEOUTS_MAX + 1)],
        initial=TIMEOUTS_DEFAULT)
    vacation_allowed = forms.BooleanField(
        label=_("Vacation stops the clock (turn-based)"), required=False, initial=True)
    public = forms.BooleanField(label=_("List the table in the lobby"), required=False,
                                initial=True,
                                help_text=_("Unticked: only people with the code or an "
                                            "invitation can join."))
    watchers_allowed = forms.BooleanField(
        label=_("People may watch"), required=False, initial=True,
        help_text=_("Watchers see the table as a person without a seat does: no hand until "
                    "the round ends. They cannot chat."))
    allow_bots = forms.BooleanField(label=_("Bots may fill seats"), required=False)
    bot_level = forms.ChoiceField(label=_("Bot level"), choices=BOT_LEVELS, initial="medium")
    bot_think_ms = forms.IntegerField(label=_("Bot think time (milliseconds)"), min_value=0,
                                      max_value=10_000, initial=1000)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        choices = move_seconds_choices()
        self.fields["move_seconds"].choices = [(s, move_time_label(s)) for s in choices]
        self.fields["move_seconds"].initial = 86400 if 86400 in choices else choices[0]

    def clean_name(self) -> str:
        return clean_table_name(self.cleaned_data.get("name", ""))

    def clean(self) -> dict:
        data = super().clean()
        if data.get("pace") == TURN and not data.get("move_seconds"):
            self.add_error("move_seconds", _("Choose the time per move."))
        return data

    def service_kwargs(self) -> dict:
        data = self.cleaned_data
        pace = {}
        if data.get("pace") == TURN:
            pace = {"pace": TURN, "move_seconds": data["move_seconds"],
                    "timeouts_to_standin": data["timeouts_to_standin"],
                    "vacation_allowed": data["vacation_allowed"]}
        options = {"target": data.get("target"), "hand_size": data.get("hand_size"),
                   "best_of": data.get("best_of"), "tie": data.get("tie") or None,
                   "turn_seconds": data.get("turn_seconds")}
        players = data.get("players")
        if players is None and data["preset"] not in FOUR_ONLY:
            players = 4
        return {"name": data["name"], "preset": data["preset"], "players": players,
                "options": options, "public": data["public"], "allow_bots": data["allow_bots"],
                "bot_level": data["bot_level"], "bot_think_ms": data["bot_think_ms"],
                "watchers_allowed": data["watchers_allowed"], **pace}


class QuickPlayForm(forms.Form):
    """"Play now" (the home page): a game, and how many play where the game leaves it open."""

    preset = forms.ChoiceField(label=_("Game"), choices=PRESET_CHOICES, initial="partners")
    players = forms.TypedChoiceField(
        label=_("Players"), required=False, coerce=int, empty_value=None, initial="4",
        choices=[("2", "2"), ("3", "3"), ("4", "4")],
        help_text=_("Draw, block, all fives and tranca: 2, 3 or 4 players."))
    pace = forms.ChoiceField(label=_("Pace"), choices=PACE_CHOICES, initial=LIVE,
                             required=False, widget=forms.RadioSelect)
    move_seconds = forms.TypedChoiceField(label=_("Time per move (turn-based)"),
                                          required=False, coerce=int, empty_value=None,
                                          choices=())
    allow_bots = forms.BooleanField(
        label=_("Bots may fill the free seats (turn-based)"), required=False,
        help_text=_("Unticked, the match starts only when people have taken every seat."))

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        choices = move_seconds_choices()
        self.fields["move_seconds"].choices = [(s, move_time_label(s)) for s in choices]
        self.fields["move_seconds"].initial = 86400 if 86400 in choices else choices[0]

    def service_kwargs(self) -> dict:
        data = self.cleaned_data
        # The four-player games ignore the field (a browser without JS still sends it).
        players = None if data["preset"] in FOUR_ONLY else data.get("players")
        if data.get("pace") == TURN:
            return {"preset": data["preset"], "players": players,
                    "move_seconds": data.get("move_seconds") or move_seconds_choices()[0],
                    "allow_bots": data.get("allow_bots", False)}
        return {"preset": data["preset"], "players": players}


#: The practice form's clock choices (seconds per move); "" is no time limit.
PRACTICE_CLOCKS = [("", _("No time limit")), ("15", _("15 s per move")),
                   ("30", _("30 s per move")), ("45", _("45 s per move")),
                   ("60", _("60 s per move"))]


class PracticeForm(forms.Form):
    """Play against bots now (seeds 002/003): the game, its player count where it has a
    choice, the bots' level and the clock; everything else is the game's default."""

    preset = forms.ChoiceField(label=_("Game"), choices=PRESET_CHOICES, initial="partners")
    players = forms.TypedChoiceField(
        label=_("Players, you included"), required=False, coerce=int, empty_value=None,
        choices=[("2", _("2: you and 1 bot")), ("3", _("3: you and 2 bots")),
                 ("4", _("4: you and 3 bots"))], initial="4",
        help_text=_("Only draw, block, all fives and tranca may have 2 or 3 players."))
    bot_level = forms.ChoiceField(label=_("Bot level"), choices=BOT_LEVELS, initial="easy")
    turn_seconds = forms.TypedChoiceField(label=_("Clock"), choices=PRACTICE_CLOCKS,
                                          required=False, coerce=int, empty_value=None)

    def service_kwargs(self) -> dict:
        data = self.cleaned_data
        return {"preset": data["preset"], "players": data.get("players"),
                "bot_level": data["bot_level"], "turn_seconds": data.get("turn_seconds")}
