"""Read-only views of the club's books for staff: changes go through apps.club.services."""

from __future__ import annotations

from django.contrib import admin

from .models import LeagueWeek, LedgerEntry, Purse, Rating, Stake, Wallet


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnly):
    list_display = ("created_at", "user", "reason", "coins", "xp", "table", "key")
    list_filter = ("reason",)
    search_fields = ("user__username", "key")
    raw_id_fields = ("user", "table", "match", "purse")


@admin.register(Wallet)
class WalletAdmin(ReadOnly):
    list_display = ("user", "coins", "xp")
    search_fields = ("user__username",)


@admin.register(Stake)
class StakeAdmin(ReadOnly):
    list_display = ("table", "entry", "escrow", "state", "fill_by")
    list_filter = ("state", "entry")


@admin.register(Purse)
class PurseAdmin(ReadOnly):
    list_display = ("key", "entry", "escrow", "added", "state", "settled_at")
    list_filter = ("state",)


@admin.register(Rating)
class RatingAdmin(ReadOnly):
    list_display = ("user", "kind", "shown", "matches", "updated_at")
    list_filter = ("kind",)


@admin.register(LeagueWeek)
class LeagueWeekAdmin(ReadOnly):
    list_display = ("week", "closed_at")
