"""The Content-Security-Policy header (django-csp), with the page's own WebSocket origin.

CSP Level 3 lets ``connect-src 'self'`` match ws:/wss: on the same host, but older browsers
(Safari before 15.4 among them) do not, and the table page, the home page and the observer page
all open a socket to the host they were served from. The origin is taken from the request's
validated host, so it is right behind any proxy that passes the Host header on.
"""

from __future__ import annotations

from csp.middleware import CSPMiddleware as BaseCSPMiddleware
from csp.middleware import PolicyParts
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponseBase


def websocket_origin(request: HttpRequest) -> str | None:
    """``wss://host`` for a page served over HTTPS, ``ws://host`` otherwise; None for a host
    outside ALLOWED_HOSTS (that response is an error page that opens no socket)."""
    try:
        host = request.get_host()
    except DisallowedHost:
        return None
    return f"{'wss' if request.is_secure() else 'ws'}://{host}"


class CSPMiddleware(BaseCSPMiddleware):
    def get_policy_parts(self, request: HttpRequest, response: HttpResponseBase,
                         report_only: bool = False) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        origin = websocket_origin(request)
        if origin is not None:
            update = dict(parts.update or {})
            extra = update.get("connect-src") or []
            extra = [extra] if isinstance(extra, str) else list(extra)
            update["connect-src"] = [*extra, origin]
            parts.update = update
        return parts
