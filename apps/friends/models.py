"""Friends, blocks and the usual partner. Written only by :mod:`apps.friends.services`."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class Friendship(models.Model):
    """A request, then (accepted) a friendship both ways: one row per pair, whoever asked.

    The pair is kept lower id first, so two people asking each other at the same moment meet
    the same unique row instead of making two.
    """

    class Status(models.TextChoices):
        PENDING = "pending", _("pending")
        ACCEPTED = "accepted", _("accepted")

    first = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                              related_name="+")
    second = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                               related_name="+")
    asked_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                 related_name="+")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    created_at = models.DateTimeField(default=timezone.now)
    accepted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["first", "second"], name="friendship_once"),
            models.CheckConstraint(condition=Q(first__lt=F("second")),
                                   name="friendship_ordered"),
        ]
        indexes = [models.Index(fields=["second", "status"])]
        verbose_name = _("friendship")
        verbose_name_plural = _("friendships")

    def __str__(self) -> str:
        return f"{self.first_id} & {self.second_id} ({self.status})"

    def other(self, user_id: int) -> int:
        return self.second_id if self.first_id == user_id else self.first_id

    @property
    def asked_id(self) -> int:
        """Who was asked: the one of the pair who did not ask."""
        return self.other(self.asked_by_id)


class Block(models.Model):
    """``blocker`` does not want to hear from ``blocked``: no invitation, chat or request."""

    blocker = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                related_name="+")
    blocked = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["blocker", "blocked"], name="block_once"),
            models.CheckConstraint(condition=~Q(blocker=F("blocked")), name="block_not_self"),
        ]
        indexes = [models.Index(fields=["blocked"])]
        verbose_name = _("block")
        verbose_name_plural = _("blocks")

    def __str__(self) -> str:
        return f"{self.blocker_id} blocks {self.blocked_id}"


class UsualPartner(models.Model):
    """The friend a person usually plays with as a pair (tournaments register the two)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                primary_key=True, related_name="+")
    partner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                related_name="+")
    chosen_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = _("usual partner")
        verbose_name_plural = _("usual partners")

    def __str__(self) -> str:
        return f"{self.user_id} plays with {self.partner_id}"
