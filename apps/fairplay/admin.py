from django.contrib import admin

from .models import Record, Stint, TableMinimum


@admin.register(Record)
class RecordAdmin(admin.ModelAdmin):
    list_display = ("user", "started", "finished", "abandoned", "updated_at")
    search_fields = ("user__username",)
    # The record follows the tables' transactions: nobody edits it by hand.
    readonly_fields = ("user", "started", "finished", "abandoned", "abandoned_at", "updated_at")


@admin.register(Stint)
class StintAdmin(admin.ModelAdmin):
    list_display = ("user", "match", "seat", "state", "how", "started_at", "ended_at")
    list_filter = ("state",)
    search_fields = ("user__username",)
    readonly_fields = ("match", "user", "seat", "state", "how", "started_at", "ended_at")


@admin.register(TableMinimum)
class TableMinimumAdmin(admin.ModelAdmin):
    list_display = ("table", "minimum", "set_by", "set_at")
