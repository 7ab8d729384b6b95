"""Staff run tournaments: the "moderator" group may create and cancel them (superusers hold
every right; a site may grant these to another group by hand)."""

from django.db import migrations

GROUP = "moderator"
CODENAMES = ["create_tournament", "cancel_tournament"]


def grant(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    # Permissions are normally created after all migrations (post_migrate): make them now.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group = Group.objects.filter(name=GROUP).first()
    if group is None:  # removed by the operator: nothing to extend
        return
    group.permissions.add(*Permission.objects.filter(content_type__app_label="tournaments",
                                                     codename__in=CODENAMES))


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group = Group.objects.filter(name=GROUP).first()
    if group is not None:
        group.permissions.remove(*Permission.objects.filter(
            content_type__app_label="tournaments", codename__in=CODENAMES))


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0001_initial"),
        ("moderation", "0002_moderator_group"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
