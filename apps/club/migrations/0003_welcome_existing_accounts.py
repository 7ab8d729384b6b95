"""Accounts made before the club get the welcome grant too, as new ones do at sign-up."""

from django.db import migrations

START_COINS = 1000  # apps.club.numbers.START_COINS when this ran (migrations do not import it)


def grant(apps, schema_editor):
    User = apps.get_model("auth", "User")
    Wallet = apps.get_model("club", "Wallet")
    LedgerEntry = apps.get_model("club", "LedgerEntry")
    done = set(LedgerEntry.objects.filter(reason="start").values_list("user_id", flat=True))
    for user_id in User.objects.exclude(profile__guest=True).values_list("pk", flat=True):
        if user_id in done:
            continue
        LedgerEntry.objects.create(user_id=user_id, coins=START_COINS, reason="start",
                                   key=f"start:{user_id}")
        wallet, _created = Wallet.objects.get_or_create(user_id=user_id)
        wallet.coins += START_COINS
        wallet.save(update_fields=["coins"])


class Migration(migrations.Migration):
    dependencies = [
        ("club", "0002_ratings_league"),
        ("accounts", "0004_ways_to_play"),
    ]

    operations = [migrations.RunPython(grant, migrations.RunPython.noop)]
