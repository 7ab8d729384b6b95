"""The admin: chat, reports, mutes and bans are browsable; the moderation log is read-only.

Staff act through ``/staff/`` (the services write the log); here nothing may add, change or
delete a log row, not even a superuser.
"""

from django.contrib import admin

from .models import Ban, ChatMessage, ModerationLog, Mute, Report


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows written only by apps.moderation.services, so every action is logged."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(ModerationLog)
class ModerationLogAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "actor", "action", "target_user", "target_table", "reason")
    list_filter = ("action", "created_at", ("actor", admin.RelatedOnlyFieldListFilter))
    search_fields = ("reason", "actor__username", "target_user__username", "target_table__code")
    date_hierarchy = "created_at"
    readonly_fields = [f.name for f in ModerationLog._meta.fields]


@admin.register(ChatMessage)
class ChatMessageAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "table", "user", "text", "hidden", "deleted")
    list_filter = ("hidden", "deleted", "created_at")
    search_fields = ("text", "user__username", "table__code")


@admin.register(Report)
class ReportAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "status", "reason", "reporter", "reported_user", "table",
                    "handled_by")
    list_filter = ("status", "reason", "created_at")
    search_fields = ("note", "resolution", "reporter__username", "reported_user__username")


@admin.register(Mute)
class MuteAdmin(ReadOnlyAdmin):
    list_display = ("user", "until", "reason", "by", "created_at", "lifted_at")
    list_filter = ("created_at",)
    search_fields = ("user__username", "reason")


@admin.register(Ban)
class BanAdmin(ReadOnlyAdmin):
    list_display = ("user", "until", "reason", "by", "created_at", "lifted_at")
    list_filter = ("created_at",)
    search_fields = ("user__username", "reason")
