from django.contrib import admin
from django.urls import include, path

from apps.core import views as core_views
from apps.notifications import pwa
from apps.tables import views as table_views

urlpatterns = [
    path("", table_views.home, name="home"),
    path("", include("apps.tables.urls")),
    path("healthz", core_views.healthz, name="healthz"),
    path("favicon.ico", core_views.favicon, name="favicon"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("accounts/", include("apps.accounts.urls")),
    path("admin/", admin.site.urls),
    path("staff/", include("apps.moderation.urls")),
    path("club/", include("apps.club.urls")),
    path("fairplay/", include("apps.fairplay.urls")),
    path("friends/", include("apps.friends.urls")),
    path("", include("apps.moderation.table_urls")),
    path("tournaments/", include("apps.tournaments.urls")),
    path("", include("apps.reviews.urls")),
    path("notifications/", include("apps.notifications.urls")),
    # The installed app: at the root, so the worker's scope is the whole site.
    path("manifest.webmanifest", pwa.manifest, name="manifest"),
    path("sw.js", pwa.service_worker, name="service_worker"),
    path("offline/", pwa.offline, name="offline"),
]

handler500 = "apps.core.views.server_error"
