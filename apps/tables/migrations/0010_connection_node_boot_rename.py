import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("tables", "0009_connection_node_boot")]

    operations = [
        migrations.RemoveField(model_name="connection", name="node"),
        migrations.RenameField(model_name="connection", old_name="lease", new_name="node"),
        migrations.AlterField(
            model_name="connection",
            name="node",
            field=models.ForeignKey(blank=True, null=True, to_field="boot",
                                    on_delete=django.db.models.deletion.DO_NOTHING,
                                    related_name="connections", to="tables.webnode"),
        ),
    ]
