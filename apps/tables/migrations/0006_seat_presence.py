"""A seat's ``away_since`` is its presence from now on: a seated person without a socket at
the table is away (since now, for want of better), one with a socket is not."""

from django.db import migrations
from django.utils import timezone


def mark(apps, schema_editor):
    Seat = apps.get_model("tables", "Seat")
    Connection = apps.get_model("tables", "Connection")
    now = timezone.now()
    for seat in Seat.objects.filter(user__isnull=False):
        holding = Connection.objects.filter(table_id=seat.table_id, user_id=seat.user_id).exists()
        if holding and seat.away_since is not None:
            seat.away_since = None
            seat.save(update_fields=["away_since"])
        elif not holding and seat.away_since is None:
            seat.away_since = now
            seat.save(update_fields=["away_since"])


class Migration(migrations.Migration):
    dependencies = [("tables", "0005_backfill_positions")]
    operations = [migrations.RunPython(mark, migrations.RunPython.noop)]
