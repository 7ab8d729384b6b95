"""A refused request (403) is one line in the log: method, path, who asked and the status, no
traceback (apps/core/request_log.py); every other record of ``django.request`` is left as it was."""

from __future__ import annotations

import logging
import sys

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied

from apps.core.request_log import OneLineRefusals

pytestmark = pytest.mark.django_db


@pytest.fixture
def request_log(caplog):
    """What ``django.request`` writes. caplog listens on the root logger, which "django" does
    not propagate to (settings' LOGGING): unless "django" shares the root's handlers (as under
    pytest it may), caplog listens on ``django.request`` itself too."""
    logger = logging.getLogger("django.request")
    listening = caplog.handler not in logging.getLogger("django").handlers
    if listening:
        logger.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.INFO, logger="django.request"):
            yield caplog
    finally:
        if listening:
            logger.removeHandler(caplog.handler)


def test_a_refused_request_is_logged_as_one_line_without_a_traceback(client, request_log):
    person = get_user_model().objects.create_user(username="ana", password="pw-anaana")
    client.force_login(person)
    request_log.clear()  # the sign-in's own lines
    response = client.get("/staff/reports/")  # staff only: PermissionDenied
    assert response.status_code == 403
    record, = [r for r in request_log.records if r.name == "django.request"]
    assert record.levelname == "WARNING" and record.exc_info is None
    assert record.getMessage() == f"Forbidden: GET /staff/reports/ (user {person.pk}) 403"
    text = request_log.text.strip()
    assert "Traceback" not in text and "\n" not in text


def test_the_line_names_a_visitor_who_is_not_signed_in_and_escapes_the_path():
    class Request:
        method, path = "POST", "/staff/act/ban/\nFAKE LINE"

        @property
        def user(self):
            raise RuntimeError("no session")

    record = _record(PermissionDenied(), request=Request())
    OneLineRefusals().filter(record)
    assert record.getMessage() == "Forbidden: POST /staff/act/ban/\\nFAKE LINE (user ?) 403"


def test_other_failures_keep_their_traceback():
    record = _record(ValueError("a bug"), request=None, status=500)
    assert OneLineRefusals().filter(record)
    assert record.exc_info[0] is ValueError and record.getMessage() == "Internal Server Error: /x/"


def _record(exc: BaseException, *, request, status: int = 403) -> logging.LogRecord:
    try:
        raise exc
    except type(exc):
        exc_info = sys.exc_info()
    message = "Forbidden (Permission denied): %s" if status == 403 else "Internal Server Error: %s"
    record = logging.LogRecord("django.request", logging.WARNING, __file__, 1, message, ("/x/",),
                               exc_info)
    record.request, record.status_code = request, status
    return record
