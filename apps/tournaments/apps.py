from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TournamentsConfig(AppConfig):
    name = "apps.tournaments"
    verbose_name = _("Tournaments")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported here, not above: Django calls ready() once every app's models are loaded.
        from apps.tables import hooks

        from . import follow

        # Looked up at each call, not bound now: what runs is always the module's function.
        hooks.on_committed("tournaments", lambda **kw: follow.table_committed(**kw))
        hooks.on_join_refusal("tournaments", lambda **kw: follow.join_refusal(**kw))
        hooks.on_change("tournaments", lambda **kw: follow.table_changing(**kw))
