from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class NotificationsConfig(AppConfig):
    name = "apps.notifications"
    verbose_name = _("Notifications")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported here, not above: Django calls ready() once every app's models are loaded.
        # The apps below never import this one: it listens to their hooks and signals.
        from apps.accounts.profile_parts import register_profile_part
        from apps.friends.events import friend_requested
        from apps.reviews.events import review_done
        from apps.tables import events as table_events
        from apps.tables import hooks
        from apps.tournaments.events import partner_invited, table_ready

        from . import sources, views

        # Bound directly: it runs for every version of every table, moves included.
        hooks.on_change("notifications", sources.table_changing)
        table_events.invited.connect(sources.invited, dispatch_uid="notifications.invited")
        friend_requested.connect(sources.friend_requested,
                                 dispatch_uid="notifications.friend_requested")
        partner_invited.connect(sources.partner_invited,
                                dispatch_uid="notifications.partner_invited")
        table_ready.connect(sources.table_ready, dispatch_uid="notifications.table_ready")
        review_done.connect(sources.review_done, dispatch_uid="notifications.review_done")
        register_profile_part("notifications", views.profile_part)
