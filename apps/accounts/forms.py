from decimal import Decimal

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm, UserCreationForm
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from apps.accounts.avatars import AVATAR_CHOICES, DEFAULT_AVATAR, avatar_url
from apps.accounts.models import (
    BOT_THINK_MAX_MS,
    GAME_SPEEDS,
    LANGUAGE_CHOICES,
    TILE_SIZES,
    supported_language,
)
from apps.accounts.services import GUEST_USERNAME_PREFIX, clean_display_name
from apps.accounts.validators import DISPLAY_NAME_MAX_LENGTH

User = get_user_model()


class AvatarRadioSelect(forms.RadioSelect):
    """Radio buttons labelled with the avatar pictures."""

    template_name = "accounts/widgets/avatar_radio.html"
    option_template_name = "accounts/widgets/avatar_option.html"

    def create_option(self, name, value, label, selected, index, subindex=None, attrs=None):
        option = super().create_option(name, value, label, selected, index, subindex, attrs)
        option["avatar_url"] = avatar_url(value)
        return option


def display_name_field() -> forms.CharField:
    return forms.CharField(
        label=_("Display name"),
        max_length=DISPLAY_NAME_MAX_LENGTH * 4,  # checked precisely after trimming
        help_text=_("Shown at the table: up to 12 letters, digits, dots, hyphens or underscores."),
        widget=forms.TextInput(attrs={"autocomplete": "nickname", "maxlength": 32}),
    )


def avatar_field() -> forms.ChoiceField:
    return forms.ChoiceField(
        label=_("Avatar"), choices=AVATAR_CHOICES, initial=DEFAULT_AVATAR, widget=AvatarRadioSelect
    )


def language_field() -> forms.ChoiceField:
    return forms.ChoiceField(label=_("Language"), choices=LANGUAGE_CHOICES)


class SignUpForm(UserCreationForm):
    email = forms.EmailField(
        label=_("Email"),
        help_text=_("Only used to reset your password."),
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )
    display_name = display_name_field()
    avatar = avatar_field()
    language = language_field()

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")

    def __init__(self, *args, language: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["language"].initial = supported_language(language)

    def clean_username(self):
        username = super().clean_username()
        if username and username.lower().startswith(GUEST_USERNAME_PREFIX):
            raise ValidationError(
                _("Usernames starting with “%(prefix)s” are kept for guests."),
                code="reserved", params={"prefix": GUEST_USERNAME_PREFIX})
        return username

    def clean_email(self):
        email = self.cleaned_data["email"]
        if User._default_manager.filter(email__iexact=email).exists():
            raise ValidationError(_("An account with this email already exists."), code="taken")
        return email

    def clean_display_name(self):
        return clean_display_name(self.cleaned_data["display_name"])


class ProfileForm(forms.Form):
    display_name = display_name_field()
    avatar = avatar_field()
    language = language_field()

    def __init__(self, *args, user, **kwargs):
        self.user = user
        super().__init__(*args, **kwargs)

    def clean_display_name(self):
        return clean_display_name(self.cleaned_data["display_name"], exclude_user=self.user)


class LanguageForm(forms.Form):
    language = language_field()


class TableOptionsForm(forms.Form):
    """Seed 004's options, per person: how the table page draws and plays for them."""

    tile_size = forms.ChoiceField(label=_("Tile size"), choices=TILE_SIZES)
    game_speed = forms.ChoiceField(
        label=_("Game speed"), choices=GAME_SPEEDS,
        help_text=_("How fast the moves of bots and of the table are shown."))
    sounds = forms.BooleanField(label=_("Sound effects"), required=False,
                                help_text=_("A tile placed, your turn, a pass, time running out."))
    auto_play = forms.BooleanField(
        label=_("Play automatically"), required=False,
        help_text=_("The table plays for you (the first tile that fits) until you turn it off; "
                    "the others see those moves as played by the table."))
    auto_pass = forms.BooleanField(label=_("Auto-pass"), required=False,
                                   help_text=_("Pass by yourself when nothing in your hand fits."))
    learning_mode = forms.BooleanField(
        label=_("Learning mode"), required=False,
        help_text=_("Show the tiles still unseen and the numbers each player passed on."))
    arrange_tiles = forms.BooleanField(
        label=_("Arrange tiles"), required=False,
        help_text=_("Drag the tiles of your hand to put them in your own order."))
    bot_think_seconds = forms.DecimalField(
        label=_("Minimum bot think time at tables you host (seconds)"), min_value=0,
        max_value=BOT_THINK_MAX_MS / 1000, decimal_places=1,
        widget=forms.NumberInput(attrs={"step": "0.5"}),
        help_text=_("0 to 10 seconds; the create page starts from it."))

    CHECKBOXES = ("sounds", "auto_play", "auto_pass", "learning_mode", "arrange_tiles")

    @classmethod
    def initial_from(cls, options: dict) -> dict:
        initial = {k: v for k, v in options.items() if k != "bot_think_ms"}
        # Decimal, so that one second shows as "1" and not "1.0".
        initial["bot_think_seconds"] = Decimal(options["bot_think_ms"]) / 1000
        return initial

    def service_kwargs(self) -> dict:
        data = dict(self.cleaned_data)
        data["bot_think_ms"] = int(data.pop("bot_think_seconds") * 1000)
        return data


class SignInForm(AuthenticationForm):
    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": _("That username and password do not match. Both are case-sensitive."),
    }


__all__ = [
    "AvatarRadioSelect",
    "LanguageForm",
    "ProfileForm",
    "SignInForm",
    "SignUpForm",
    "TableOptionsForm",
]
