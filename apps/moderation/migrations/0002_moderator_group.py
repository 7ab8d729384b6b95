"""The "moderator" group: mute, hide, close, rename, remove, observe and work reports.

Bans (for a time and for good), lifting bans and deleting messages are not in it: superusers
hold every permission; a site may grant ``ban_user`` / ``lift_ban`` to a trusted group by hand.
"""

from django.db import migrations

GROUP = "moderator"
CODENAMES = [
    "mute_user", "hide_message", "close_table", "hide_table", "rename_table", "remove_player",
    "handle_report", "observe_table",
    "view_chatmessage", "view_report", "view_mute", "view_ban", "view_moderationlog",
]


def create_group(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    # Permissions are normally created after all migrations (post_migrate): make them now.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _created = Group.objects.get_or_create(name=GROUP)
    perms = Permission.objects.filter(content_type__app_label="moderation",
                                      codename__in=CODENAMES)
    group.permissions.add(*perms)


def remove_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("moderation", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_group, remove_group)]
