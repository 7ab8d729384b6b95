"""Expired sessions are cleared by beat (Django's clearsessions), the live ones kept."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.utils import timezone

from apps.accounts import tasks

pytestmark = pytest.mark.django_db


def test_expired_sessions_go_and_live_ones_stay(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("ana", password="pw-anaana"))
    live = client.session.session_key
    Session.objects.create(session_key="x" * 32, session_data="e30:",
                           expire_date=timezone.now() - timedelta(seconds=1))
    tasks.clear_expired_sessions()
    assert list(Session.objects.values_list("session_key", flat=True)) == [live]
    entry = settings.CELERY_BEAT_SCHEDULE["clear-expired-sessions"]
    assert entry["task"] == "apps.accounts.tasks.clear_expired_sessions"
