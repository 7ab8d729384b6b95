from django.contrib.auth import get_user_model
from django.urls import reverse

from tests.accounts.conftest import PASSWORD


def test_user_admin_shows_the_profile_inline(client, user):
    admin = get_user_model().objects.create_superuser("boss", "boss@example.com", PASSWORD)
    client.force_login(admin)
    response = client.get(reverse("admin:auth_user_change", args=[user.pk]))
    assert response.status_code == 200
    assert 'name="profile-0-display_name"' in response.content.decode()
    assert client.get(reverse("admin:auth_user_add")).status_code == 200
    assert client.get(reverse("admin:accounts_profile_changelist")).status_code == 200
