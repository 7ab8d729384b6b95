"""Connections point at their web process's boot, not at its lease row's id (models.WebNode).

Two migrations, so that the rows copied here (their foreign keys checked at commit) are
committed before 0010 alters the table: PostgreSQL refuses an ALTER TABLE with checks pending.
"""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def copy_boots(apps, schema_editor):
    Connection = apps.get_model("tables", "Connection")
    WebNode = apps.get_model("tables", "WebNode")
    Connection.objects.filter(node__isnull=False).update(
        lease_id=Subquery(WebNode.objects.filter(pk=OuterRef("node_id")).values("boot")[:1]))


class Migration(migrations.Migration):
    dependencies = [("tables", "0008_guests")]

    operations = [
        migrations.AddField(
            model_name="connection",
            name="lease",
            field=models.ForeignKey(blank=True, null=True, to_field="boot",
                                    on_delete=django.db.models.deletion.DO_NOTHING,
                                    related_name="+", to="tables.webnode"),
        ),
        migrations.RunPython(copy_boots, migrations.RunPython.noop),
    ]
