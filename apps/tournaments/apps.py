from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TournamentsConfig(AppConfig):
    name = "apps.tournaments"
    verbose_name = _("Tournaments")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported here, not above: Django calls ready() once every app's models are loaded.
        from apps.moderation.services import grant_moderators
        from apps.tables import hooks

        from . import follow

        # As migration 0002 gave the group it found: a group made again later has them too.
        grant_moderators(app_label="tournaments",
                         codenames=("create_tournament", "cancel_tournament"))

        # Looked up at each call, not bound now: what runs is always the module's function.
        hooks.on_committed("tournaments", lambda **kw: follow.table_committed(**kw))
        hooks.on_join_refusal("tournaments", lambda **kw: follow.join_refusal(**kw))
        hooks.on_change("tournaments", lambda **kw: follow.table_changing(**kw))
