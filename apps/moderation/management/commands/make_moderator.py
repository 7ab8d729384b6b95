"""``manage.py make_moderator USERNAME [--remove]``: make someone a moderator, or stop.

A moderator needs both staff status and the "moderator" group: the group alone opens neither
``/staff/`` nor any staff action.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from apps.moderation import services


class Command(BaseCommand):
    help = "Make a person a moderator (staff status + the moderator group), or --remove it."

    def add_arguments(self, parser) -> None:
        parser.add_argument("username", help="the person's username (case does not matter)")
        parser.add_argument("--remove", action="store_true",
                            help="take the moderator group (and staff status) away")

    def handle(self, *args, username: str, remove: bool, **options) -> None:
        user = get_user_model().objects.filter(username__iexact=username.strip()).first()
        if user is None:
            raise CommandError(f"No user has the username {username!r}.")
        if remove:
            services.remove_moderator(user)
            kept = " (still staff: superuser or other admin rights)" if user.is_staff else ""
            self.stdout.write(f"{user.get_username()} is no longer a moderator{kept}.")
        else:
            if not user.is_active:
                raise CommandError(f"{user.get_username()}'s account is not active.")
            services.make_moderator(user)
            self.stdout.write(f"{user.get_username()} is now a moderator: /staff/ is open to "
                              "them.")
