import logging

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpResponse, JsonResponse
from django.utils.cache import patch_cache_control
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from apps.core.outages import OUTAGES
from config.env import redis_urls

logger = logging.getLogger(__name__)


def check_database() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
    except Exception:
        logger.exception("healthz: database check failed")
        return False


def check_redis() -> bool:
    """Ping every Redis the site uses (its roles may each have a server: settings'
    REDIS_LAYER_URL and REDIS_STATE_URL beside REDIS_URL)."""
    urls = dict.fromkeys((settings.REDIS_URL, settings.REDIS_LAYER_URL,
                          settings.REDIS_STATE_URL))
    try:
        for url in urls:
            client = redis.Redis.from_url(redis_urls(url)["redis"], socket_connect_timeout=2,
                                          socket_timeout=2)
            try:
                if not client.ping():
                    return False
            finally:
                client.close()
        return True
    except Exception:
        logger.exception("healthz: redis check failed")
        return False


@never_cache
@require_GET
def healthz(request):
    db_ok = check_database()
    redis_ok = check_redis()
    ok = db_ok and redis_ok
    return JsonResponse({"ok": ok, "db": db_ok, "redis": redis_ok}, status=200 if ok else 503)


#: Browsers ask for /favicon.ico before reading any page (and pages name favicon.svg too).
FAVICON = settings.BASE_DIR / "static" / "favicon.ico"


@require_GET
def favicon(request):
    response = HttpResponse(FAVICON.read_bytes(), content_type="image/x-icon")
    patch_cache_control(response, public=True, max_age=86400)
    return response


def server_error(request):
    """The page of an unhandled exception (``handler500``), drawn without the database: it may
    be what failed. PostgreSQL or Redis out of reach is said as such, with 503 and a
    Retry-After, since reloading in a moment works; anything else is our fault, and 500."""
    import sys

    from django.template import loader

    outage = isinstance(sys.exc_info()[1], OUTAGES)
    try:
        # A plain context: the request's context processors would read the session and the
        # user.
        html = loader.get_template("500.html").render({"outage": outage})
    except Exception:
        # The page itself failed (its static files' manifest missing, say): a bare sentence
        # still beats the server's own empty 500.
        logger.exception("the error page could not be drawn")
        words = _("Back in a moment") if outage else _("Something went wrong")
        html = f"<!DOCTYPE html><title>{words}</title><p>{words}</p>"
    response = HttpResponse(html, status=503 if outage else 500)
    if outage:
        response["Retry-After"] = "5"
    return response
