from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ClubConfig(AppConfig):
    name = "apps.club"
    verbose_name = _("Club")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.club import (
            signals,  # noqa: F401  (connects the receivers)
            state_part,
        )
        from apps.tables.state import Part, register_part

        register_part(Part("club", state_part.build, state_part.compose,
                           state_part.REFRESH_ON))
