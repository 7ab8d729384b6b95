from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ClubConfig(AppConfig):
    name = "apps.club"
    verbose_name = _("Club")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported here, not above: Django calls ready() once every app's models are loaded.
        from apps.club import (
            signals,  # noqa: F401  (connects the receivers)
            state_part,
        )
        from apps.tables import hooks
        from apps.tables.state import Part, register_part

        from . import services

        register_part(Part("club", state_part.build, state_part.compose,
                           state_part.REFRESH_ON))
        # Looked up at each call, not bound now: what runs is always the module's function.
        hooks.on_change("club", lambda **kw: services.stake_follows(**kw))
        hooks.on_match_finished("club", lambda **kw: services.match_finished(**kw))
