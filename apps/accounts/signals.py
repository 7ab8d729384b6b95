from django.conf import settings
from django.db.models.signals import post_save
from django.dispatch import receiver

from apps.accounts.services import ensure_profile


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="accounts_ensure_profile")
def create_profile(sender, instance, created, raw=False, **kwargs):
    """Every user gets a profile (createsuperuser, admin, shell). sign_up makes its own."""
    if not created or raw or getattr(instance, "_skip_profile", False):
        return
    ensure_profile(instance)
