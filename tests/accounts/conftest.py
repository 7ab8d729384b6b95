import pytest
from django.contrib.auth import get_user_model

from apps.accounts import ratelimit, services

PASSWORD = "tile-Shuffle-42"


@pytest.fixture(autouse=True)
def _reset_sign_in_limits(db):
    """Failed sign-ins are counted in the database (rolled back per test); reset anyway."""
    ratelimit.reset()
    yield
    ratelimit.reset()


@pytest.fixture
def make_user(db):
    def make(username="alice", display_name=None, language="es", avatar="cat", email=None):
        return services.sign_up(
            username=username,
            email=email or f"{username}@example.com",
            password=PASSWORD,
            display_name=display_name or username,
            avatar=avatar,
            language=language,
        )

    return make


@pytest.fixture
def user(make_user):
    return make_user()


@pytest.fixture
def User():
    return get_user_model()
