import pytest
from django.urls import reverse

from apps.core import views

pytestmark = pytest.mark.django_db


def test_healthz_checks_database_and_redis(client):
    response = client.get(reverse("healthz"))
    assert response.status_code == 200
    assert response.json() == {"ok": True, "db": True, "redis": True}
    assert "no-cache" in response["Cache-Control"]


def test_healthz_returns_503_when_redis_is_unreachable(client, settings, tmp_path):
    settings.REDIS_URL = f"unix://{tmp_path / 'nothing-here.sock'}"
    response = client.get(reverse("healthz"))
    assert response.status_code == 503
    assert response.json() == {"ok": False, "db": True, "redis": False}


def test_healthz_returns_503_when_database_check_fails(client, monkeypatch):
    monkeypatch.setattr(views, "check_database", lambda: False)
    response = client.get(reverse("healthz"))
    assert response.status_code == 503
    assert response.json() == {"ok": False, "db": False, "redis": True}


@pytest.mark.postgres
def test_postgres_marker_runs_only_on_postgresql():
    from django.db import connection

    assert connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_catalog.pg_locks LIMIT 1")
