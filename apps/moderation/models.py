"""Table chat, reports, mutes, bans and the moderation log.

Rows here are written only by :mod:`apps.moderation.services` (and the quick phrases by
:mod:`apps.moderation.quick_chat`). The log is append-only: the
admin shows it read-only and nothing in the code updates or deletes a log row.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone, translation
from django.utils.translation import gettext_lazy as _

from . import phrases

#: Longest chat message, in characters.
CHAT_MAX_LENGTH = 200


class ChatMessage(models.Model):
    table = models.ForeignKey("tables.Table", on_delete=models.CASCADE,
                              related_name="chat_messages")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL,
                             related_name="chat_messages")
    text = models.CharField(_("text"), max_length=CHAT_MAX_LENGTH)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    #: Hidden by staff: players no longer see it; staff still do (report context).
    hidden = models.BooleanField(default=False)
    hidden_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                  on_delete=models.SET_NULL, related_name="+")
    #: Deleted by staff: the text is blanked here; the log keeps what it said.
    deleted = models.BooleanField(default=False)
    #: A quick-chat phrase's id (``apps.moderation.phrases``), or empty for words typed; the
    #: text then holds the phrase's English words, and each person reads it in their language.
    phrase = models.CharField(max_length=20, blank=True, default="")

    class Meta:
        ordering = ["created_at", "pk"]
        indexes = [models.Index(fields=["table", "created_at"]),
                   models.Index(fields=["user", "table", "created_at"])]
        verbose_name = _("chat message")
        verbose_name_plural = _("chat messages")

    def __str__(self) -> str:
        return f"{self.user}: {self.text[:40]}"

    @property
    def visible(self) -> bool:
        return not (self.hidden or self.deleted)

    @property
    def shown_text(self) -> str:
        """The text in the active language: a phrase's words are translated."""
        if self.phrase and phrases.is_phrase(self.phrase):
            return phrases.text_in(self.phrase, translation.get_language() or "en")
        return self.text


class ChatSettings(models.Model):
    """A table's chat rules that its host sets (the tables app keeps none of the chat)."""

    table = models.OneToOneField("tables.Table", on_delete=models.CASCADE, primary_key=True,
                                 related_name="+")
    #: People watching without a seat may say the quick-chat phrases (never free text).
    watcher_phrases = models.BooleanField(_("watchers may use quick phrases"), default=False)

    class Meta:
        verbose_name = _("table chat settings")
        verbose_name_plural = _("table chat settings")

    def __str__(self) -> str:
        return f"chat settings of table {self.table_id}"


class Report(models.Model):
    class Reason(models.TextChoices):
        ABUSE = "abuse", _("Abuse")
        CHEATING = "cheating", _("Cheating")
        STALLING = "stalling", _("Stalling or abandoning")
        OFFENSIVE_NAME = "offensive_name", _("Offensive name")
        SPAM = "spam", _("Spam")
        OTHER = "other", _("Other")

    class Status(models.TextChoices):
        OPEN = "open", _("Open")
        CLOSED = "closed", _("Closed")

    reporter = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL,
                                 related_name="reports_made")
    table = models.ForeignKey("tables.Table", on_delete=models.CASCADE, related_name="reports")
    message = models.ForeignKey(ChatMessage, null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="reports")
    reported_user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                      on_delete=models.SET_NULL, related_name="reports_against")
    reason = models.CharField(_("reason"), max_length=20, choices=Reason.choices)
    note = models.CharField(_("note"), max_length=500, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN,
                              db_index=True)
    resolution = models.CharField(_("resolution"), max_length=500, blank=True)
    handled_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("report")
        verbose_name_plural = _("reports")

    def __str__(self) -> str:
        return f"#{self.pk} {self.get_reason_display()} ({self.status})"


class Mute(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="mutes")
    until = models.DateTimeField()
    reason = models.CharField(_("reason"), max_length=200)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL,
                           related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    lifted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("mute")
        verbose_name_plural = _("mutes")

    def __str__(self) -> str:
        return f"{self.user} until {self.until:%Y-%m-%d %H:%M}"

    @staticmethod
    def active_q(now=None) -> Q:
        return Q(lifted_at__isnull=True, until__gt=now or timezone.now())


class Ban(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="bans")
    #: None: for good.
    until = models.DateTimeField(null=True, blank=True)
    reason = models.CharField(_("reason"), max_length=200)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL,
                           related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    lifted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("ban")
        verbose_name_plural = _("bans")

    def __str__(self) -> str:
        end = "for good" if self.until is None else f"until {self.until:%Y-%m-%d %H:%M}"
        return f"{self.user} {end}"

    @staticmethod
    def active_q(now=None) -> Q:
        return Q(lifted_at__isnull=True) & (Q(until__isnull=True)
                                            | Q(until__gt=now or timezone.now()))


class ModerationLog(models.Model):
    class Action(models.TextChoices):
        HIDE_MESSAGE = "hide_message", _("Hide a chat message")
        DELETE_MESSAGE = "delete_message", _("Delete a chat message")
        MUTE = "mute", _("Mute")
        LIFT_MUTE = "lift_mute", _("Lift a mute")
        BAN = "ban", _("Ban")
        LIFT_BAN = "lift_ban", _("Lift a ban")
        CLOSE_TABLE = "close_table", _("Close a table")
        HIDE_TABLE = "hide_table", _("Hide or show a table")
        RENAME_TABLE = "rename_table", _("Rename a table")
        REMOVE_PLAYER = "remove_player", _("Remove a player")
        CLOSE_REPORT = "close_report", _("Close a report")

    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL,
                              related_name="+")
    action = models.CharField(max_length=20, choices=Action.choices, db_index=True)
    target_user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                    on_delete=models.SET_NULL, related_name="+")
    target_table = models.ForeignKey("tables.Table", null=True, blank=True,
                                     on_delete=models.SET_NULL, related_name="+")
    target_message = models.ForeignKey(ChatMessage, null=True, blank=True,
                                       on_delete=models.SET_NULL, related_name="+")
    target_report = models.ForeignKey(Report, null=True, blank=True, on_delete=models.SET_NULL,
                                      related_name="+")
    reason = models.CharField(_("reason"), max_length=500, blank=True)
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name = _("moderation log entry")
        verbose_name_plural = _("moderation log")
        # The staff rights, one per action (granted through the "moderator" group).
        permissions = [
            ("mute_user", "Can mute a user's chat"),
            ("hide_message", "Can hide a chat message"),
            ("delete_message", "Can delete a chat message"),
            ("close_table", "Can close a table"),
            ("hide_table", "Can hide a table from the lobby"),
            ("rename_table", "Can rename a table"),
            ("remove_player", "Can remove a player from a seat"),
            ("ban_user", "Can ban a user for a time"),
            ("ban_user_forever", "Can ban a user for good"),
            ("lift_ban", "Can lift a ban"),
            ("handle_report", "Can work the report queue"),
            ("observe_table", "Can observe any table"),
        ]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor} {self.action}"
