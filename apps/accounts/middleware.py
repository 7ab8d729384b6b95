"""The signed-in player's profile language wins over the browser's (Accept-Language, cookie)."""

from django.urls import NoReverseMatch, reverse
from django.utils import translation

from apps.accounts import activity
from apps.accounts.models import LANGUAGE_CODES
from apps.accounts.services import ensure_profile, set_language


class ProfileLanguageMiddleware:
    """Place after AuthenticationMiddleware (and after LocaleMiddleware, which has already
    picked the language from the cookie / Accept-Language for anonymous visitors).

    It also notes that the person is active (``apps.accounts.activity``: no mail or push to
    someone using the site), from the profile row it loads anyway.

    It also keeps the profile in step with the site-wide language switcher: a signed-in
    player who posts to django's set_language view gets that language saved on their profile.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        user = getattr(request, "user", None)
        signed_in = user is not None and user.is_authenticated
        if signed_in:
            profile = ensure_profile(user)
            language = profile.language
            activity.seen(user.pk, last=profile.last_active_at)
            translation.activate(language)
            request.LANGUAGE_CODE = translation.get_language()
        response = self.get_response(request)
        if signed_in and request.method == "POST" and self._is_set_language(request):
            language = request.POST.get("language", "")
            if language in LANGUAGE_CODES and response.status_code in (204, 301, 302):
                set_language(user=user, language=language)
        return response

    @staticmethod
    def _is_set_language(request) -> bool:
        try:
            return request.path_info == reverse("set_language")
        except NoReverseMatch:
            return False
