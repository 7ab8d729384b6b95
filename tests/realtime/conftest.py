"""Socket tests: real ASGI stack (origin check, session auth), real Redis channel layer.

Rows are written by the test and read by the consumer on another thread and connection, so
every test here uses ``django_db(transaction=True)``.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model


@pytest.fixture
def make_user(transactional_db):
    def make(name: str):
        return get_user_model().objects.create_user(username=name, password="pw-" + name * 2)
    return make


@pytest.fixture
def people(make_user):
    return {name: make_user(name) for name in ("host", "ana", "bea", "caio", "outsider")}
