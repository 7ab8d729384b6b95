from django.db.models.signals import post_save
from django.dispatch import receiver

from apps.accounts.models import Profile
from apps.club.services import grant_start


@receiver(post_save, sender=Profile, dispatch_uid="club_start_grant")
def start_grant(sender, instance, created, raw=False, update_fields=None, **kwargs):
    """The welcome grant, in the transaction that saves the account's profile.

    Receiving the profile rather than the sign-up covers every way an account appears (sign
    up, createsuperuser, a guest's row turned into an account by clearing ``guest``); the
    ledger key makes the later saves no-ops.
    """
    if raw or instance.guest:
        return
    if not created and (update_fields is not None and "guest" not in update_fields):
        return
    grant_start(user=instance.user)
