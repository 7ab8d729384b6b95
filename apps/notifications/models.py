"""Notifications and their deliveries: an outbox in the database (docs/notifications.md).

A :class:`Notification` is one thing a person is told (its ``key`` is unique: the kind, the
object, the person and, where it repeats, the version, so a fact heard twice makes one row).
It is written in the transaction of what caused it, or on its commit. The bell shows it; each
other channel's send is a :class:`Delivery` row with its state, which a worker moves from
``pending`` to ``sent`` (or ``skipped``, ``failed``), recording every try: a worker killed
mid-send leaves a ``sending`` row whose lease runs out, and the next pass tries it again.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class Channel(models.TextChoices):
    SITE = "site", "site"
    EMAIL = "email", "email"
    PUSH = "push", "push"


class Notification(models.Model):
    recipient = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                  related_name="+")
    #: A name in ``kinds.KINDS``.
    kind = models.CharField(max_length=40)
    key = models.CharField(max_length=200, unique=True)
    #: What the words and the link are made of (names, codes, ids), rendered in the reader's
    #: language when shown or sent.
    data = models.JSONField(default=dict)
    #: The table it is about, if any: no mail or push while the person has its page open.
    table_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    read_at = models.DateTimeField(null=True, blank=True)
    #: The worker has made its deliveries (from the person's choices at that moment).
    planned = models.BooleanField(default=False)
    #: In the bell and the list (the person's choice for the site channel).
    shown = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [
            models.Index(fields=["recipient", "shown", "read_at"], name="notification_unread"),
            models.Index(fields=["planned", "created_at"], name="notification_unplanned"),
            models.Index(fields=["created_at"], name="notification_age"),
            models.Index(fields=["recipient", "table_id"], name="notification_table"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} for {self.recipient_id} ({self.key})"


class PushSubscription(models.Model):
    """One browser's push subscription (its endpoint at its push service and its keys)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="+")
    endpoint = models.URLField(max_length=1000, unique=True)
    #: The browser's P-256 public key and auth secret (base64url), RFC 8291.
    p256dh = models.CharField(max_length=200)
    auth = models.CharField(max_length=100)
    user_agent = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"push for {self.user_id} at {self.endpoint[:60]}"


class Delivery(models.Model):
    class State(models.TextChoices):
        PENDING = "pending", "pending"
        SENDING = "sending", "sending"
        SENT = "sent", "sent"
        SKIPPED = "skipped", "skipped"
        FAILED = "failed", "failed"

    notification = models.ForeignKey(Notification, on_delete=models.CASCADE,
                                      related_name="deliveries")
    channel = models.CharField(max_length=8, choices=Channel.choices)
    #: ``email``, or ``push:<subscription id>``: one row per browser.
    target = models.CharField(max_length=40)
    subscription = models.ForeignKey(PushSubscription, null=True, blank=True,
                                     on_delete=models.CASCADE, related_name="+")
    state = models.CharField(max_length=8, choices=State.choices, default=State.PENDING)
    due_at = models.DateTimeField(default=timezone.now)
    #: A worker's claim: another takes the row only after this (the worker was killed).
    lease_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    sent_at = models.DateTimeField(null=True, blank=True)
    #: Why it was skipped or failed, or the last transient error.
    reason = models.CharField(max_length=300, blank=True)
    #: The mail it went in (gathered mails carry several deliveries): its Message-ID.
    batch = models.CharField(max_length=120, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["notification", "channel", "target"],
                                               name="delivery_once")]
        indexes = [models.Index(fields=["state", "due_at"], name="delivery_due")]

    def __str__(self) -> str:
        return f"{self.channel} of {self.notification_id}: {self.state}"


class Preference(models.Model):
    """A person's choice for one kind on one channel; without a row, the kind's default."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="+")
    kind = models.CharField(max_length=40)
    channel = models.CharField(max_length=8, choices=Channel.choices)
    enabled = models.BooleanField()
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "kind", "channel"],
                                               name="preference_once")]

    def __str__(self) -> str:
        return f"{self.user_id} {self.kind}/{self.channel}: {self.enabled}"


class RefusedAddress(models.Model):
    """An address the mail server refused for good (a 5xx on RCPT TO, or a bounce): nothing
    more is sent to it until the person gives another address."""

    address = models.EmailField(max_length=254, unique=True)
    reason = models.CharField(max_length=300)
    refused_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return self.address
