"""What makes the site installable: the web app manifest, the service worker at the site's
root scope, and the offline page it serves when the network is gone. The worker shows pushes
and opens their link; it caches the offline page and its look only, never game state or a
page with a person's data (docs/notifications.md)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.templatetags.static import static
from django.utils.translation import gettext as _
from django.views.decorators.cache import cache_control

#: Bumped when what the worker caches changes: the new worker drops the old cache.
CACHE_VERSION = "v1"
THEME = "#1f6f4a"
BACKGROUND = "#f6f3ea"


@cache_control(max_age=3600, private=True)  # in the reader's language
def manifest(request: HttpRequest) -> JsonResponse:
    icons = [{"src": static(f"icons/{name}-{size}.png"), "sizes": f"{size}x{size}",
              "type": "image/png", "purpose": purpose}
             for name, purpose in (("icon", "any"), ("maskable", "maskable"))
             for size in (192, 512)]
    response = JsonResponse({
        "id": "/", "name": _("Domino Club"), "short_name": _("Dominoes"),
        "description": _("Play dominoes online with friends and bots."),
        "lang": request.LANGUAGE_CODE, "start_url": "/", "scope": "/",
        "display": "standalone", "theme_color": THEME, "background_color": BACKGROUND,
        "icons": icons}, json_dumps_params={"ensure_ascii": False})
    response["Content-Type"] = "application/manifest+json"
    return response


@cache_control(no_cache=True)
def service_worker(request: HttpRequest) -> HttpResponse:
    response = render(request, "notifications/sw.js", {
        "cache": f"domino-offline-{CACHE_VERSION}", "offline": "/offline/",
        "keep": [static("css/site.css"), static("icons/icon-192.png")],
        "icon": static("icons/icon-192.png")},
        content_type="application/javascript; charset=utf-8")
    response["Service-Worker-Allowed"] = "/"
    return response


@cache_control(max_age=3600, private=True)  # in the reader's language
def offline(request: HttpRequest) -> HttpResponse:
    """No person's data on it: the worker keeps it for when the network is gone."""
    return render(request, "notifications/offline.html")
