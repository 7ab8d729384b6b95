"""Moderators may also ban for a time (the service caps them at 30 days), lift the bans they
gave and delete chat messages (tables.md gives banning to staff). Bans for good stay with
superusers."""

from django.db import migrations

GROUP = "moderator"
CODENAMES = ["ban_user", "lift_ban", "delete_message"]


def grant(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group = Group.objects.filter(name=GROUP).first()
    if group is None:  # removed by the operator: nothing to extend
        return
    group.permissions.add(*Permission.objects.filter(content_type__app_label="moderation",
                                                     codename__in=CODENAMES))


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group = Group.objects.filter(name=GROUP).first()
    if group is not None:
        group.permissions.remove(*Permission.objects.filter(
            content_type__app_label="moderation", codename__in=CODENAMES))


class Migration(migrations.Migration):
    dependencies = [("moderation", "0002_moderator_group")]

    operations = [migrations.RunPython(grant, revoke)]
