# The games' names come from a callable (apps.tables.models.preset_choices): renaming a game
# in the menus changes no column, and from here on needs no migration.

import apps.tables.models
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('tables', '0010_connection_node_boot_rename'),
    ]

    operations = [
        migrations.AlterField(
            model_name='table',
            name='preset',
            field=models.CharField(choices=apps.tables.models.preset_choices, max_length=20),
        ),
    ]
