from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin

from apps.accounts.models import Profile

User = get_user_model()


class ProfileInline(admin.StackedInline):
    model = Profile
    can_delete = False
    fields = ("display_name", "avatar", "language")
    extra = 0


@admin.register(Profile)
class ProfileAdmin(admin.ModelAdmin):
    list_display = ("display_name", "user", "avatar", "language")
    list_filter = ("language", "avatar")
    search_fields = ("display_name", "user__username", "user__email")
    raw_id_fields = ("user",)


if admin.site.is_registered(User):
    user_admin_class = type(admin.site.get_model_admin(User))
    admin.site.unregister(User)
else:  # pragma: no cover - a custom user model without an admin
    user_admin_class = UserAdmin


@admin.register(User)
class UserWithProfileAdmin(user_admin_class):
    inlines = [*getattr(user_admin_class, "inlines", ()), ProfileInline]

    def get_inline_instances(self, request, obj=None):
        # On "add user" the post_save receiver creates the profile; edit it afterwards.
        if obj is None:
            return []
        return super().get_inline_instances(request, obj)
