from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login, update_session_auth_hash
from django.contrib.auth import views as auth_views
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render, resolve_url
from django.urls import reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from apps.accounts import services
from apps.accounts.decorators import account_required
from apps.accounts.forms import (
    LanguageForm,
    ProfileForm,
    SignInForm,
    SignUpForm,
    TableOptionsForm,
)
from apps.accounts.profile_parts import profile_context
from apps.accounts.ratelimit import client_address
from apps.accounts.selectors import is_guest

MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


def _next_url(request) -> str:
    candidate = request.POST.get("next") or request.GET.get("next") or ""
    if candidate and url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return candidate
    return resolve_url(settings.LOGIN_REDIRECT_URL)


def _add_errors(form, error: ValidationError) -> None:
    if hasattr(error, "error_dict"):
        for field, errors in error.error_dict.items():
            form.add_error(field if field in form.fields else None, errors)
    else:
        form.add_error(None, error)


def sign_up(request):
    """Sign up; from a guest session, the guest's own user row becomes the account, so their
    seats and tables stay theirs and they stay signed in."""
    guest = is_guest(request.user)
    if request.user.is_authenticated and not guest:
        return redirect(_next_url(request))
    if request.method == "POST":
        form = SignUpForm(request.POST, language=request.LANGUAGE_CODE)
        if form.is_valid():
            data = form.cleaned_data
            fields = {"username": data["username"], "email": data["email"],
                      "password": data["password1"], "display_name": data["display_name"],
                      "avatar": data["avatar"], "language": data["language"]}
            try:
                if guest:
                    user = services.convert_guest(user=request.user, **fields)
                else:
                    user = services.sign_up(**fields)
            except ValidationError as error:
                _add_errors(form, error)
            else:
                if guest:
                    # The password changed: keep this session (and what it knows, such as the
                    # tables whose code it has) signed in.
                    update_session_auth_hash(request, user)
                else:
                    login(request, user, backend=MODEL_BACKEND)
                messages.success(
                    request,
                    _("Welcome to the club, %(name)s!") % {"name": user.profile.display_name},
                )
                response = redirect(_next_url(request))
                _set_language_cookie(response, user.profile.language)
                return response
    else:
        form = SignUpForm(language=request.LANGUAGE_CODE)
    return render(request, "accounts/signup.html",
                  {"form": form, "next": _next_url(request), "guest": guest})


@require_POST
def continue_as_guest(request):
    """Continue as a guest (e.g. to watch a public table from its link): a guest session, then
    back to where the visitor was."""
    if not request.user.is_authenticated:
        try:
            user = services.start_guest(language=request.LANGUAGE_CODE,
                                        address=client_address(request))
        except services.GuestRefused as err:
            messages.error(request, err.message)
            return redirect(_next_url(request))
        login(request, user, backend=MODEL_BACKEND)
    return redirect(_next_url(request))


@account_required
def profile(request):
    current = services.ensure_profile(request.user)
    if request.method == "POST":
        form = ProfileForm(request.POST, user=request.user)
        if form.is_valid():
            try:
                updated = services.update_profile(user=request.user, **form.cleaned_data)
            except ValidationError as error:
                _add_errors(form, error)
            else:
                messages.success(request, _("Your profile was saved."))
                response = redirect("accounts:profile")
                _set_language_cookie(response, updated.language)
                return response
        return _profile_page(request, current, form=form)
    return _profile_page(request, current)


def _profile_page(request, current, *, form=None, options_form=None):
    # One language control on the page besides the header's: the profile form's.
    if form is None:
        form = ProfileForm(user=request.user, initial={
            "display_name": current.display_name, "avatar": current.avatar,
            "language": current.language})
    if options_form is None:
        options_form = TableOptionsForm(
            initial=TableOptionsForm.initial_from(services.table_options(current)))
    return render(request, "accounts/profile.html",
                  {"form": form, "options_form": options_form, "profile": current,
                   **profile_context(request)})


@account_required
@require_POST
def table_options(request):
    current = services.ensure_profile(request.user)
    form = TableOptionsForm(request.POST)
    if form.is_valid():
        try:
            services.set_table_options(user=request.user, **form.service_kwargs())
        except ValidationError as error:
            _add_errors(form, error)
        else:
            messages.success(request, _("Your table options were saved."))
            return redirect("accounts:profile")
    return _profile_page(request, current, options_form=form)


@account_required
@require_POST
def profile_language(request):
    form = LanguageForm(request.POST)
    if form.is_valid():
        updated = services.set_language(user=request.user, language=form.cleaned_data["language"])
        response = redirect(_next_url(request) if request.POST.get("next") else "accounts:profile")
        _set_language_cookie(response, updated.language)
        return response
    messages.error(request, _("Pick one of the languages shown."))
    return redirect("accounts:profile")


def _set_language_cookie(response, language: str) -> None:
    """Remember the language for when the player signs out, as set_language would."""
    response.set_cookie(
        settings.LANGUAGE_COOKIE_NAME,
        language,
        max_age=settings.LANGUAGE_COOKIE_AGE,
        path=settings.LANGUAGE_COOKIE_PATH,
        domain=settings.LANGUAGE_COOKIE_DOMAIN,
        secure=settings.LANGUAGE_COOKIE_SECURE,
        httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
        samesite=settings.LANGUAGE_COOKIE_SAMESITE,
    )


class SignInView(auth_views.LoginView):
    template_name = "accounts/login.html"
    authentication_form = SignInForm
    redirect_authenticated_user = True

    def dispatch(self, request, *args, **kwargs):
        # A guest who has an account after all may sign in to it: the guest session gives way
        # (what the guest played stays with the guest, and goes with it).
        self.redirect_authenticated_user = not is_guest(request.user)
        return super().dispatch(request, *args, **kwargs)


class SignOutView(auth_views.LogoutView):
    # POST only (Django 5). Keep the page language after signing out.
    next_page = "home"

    def post(self, request, *args, **kwargs):
        language = request.LANGUAGE_CODE
        response = super().post(request, *args, **kwargs)
        _set_language_cookie(response, language)
        return response


class PasswordChangeView(auth_views.PasswordChangeView):
    template_name = "accounts/password_change.html"
    success_url = reverse_lazy("accounts:password_change_done")


class PasswordChangeDoneView(auth_views.PasswordChangeDoneView):
    template_name = "accounts/password_change_done.html"


class PasswordResetView(auth_views.PasswordResetView):
    template_name = "accounts/password_reset.html"
    email_template_name = "accounts/email/password_reset_email.txt"
    subject_template_name = "accounts/email/password_reset_subject.txt"
    success_url = reverse_lazy("accounts:password_reset_done")
    extra_email_context = {"site_name": gettext_lazy("Domino Club")}


class PasswordResetDoneView(auth_views.PasswordResetDoneView):
    template_name = "accounts/password_reset_done.html"


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    template_name = "accounts/password_reset_confirm.html"
    success_url = reverse_lazy("accounts:password_reset_complete")


class PasswordResetCompleteView(auth_views.PasswordResetCompleteView):
    template_name = "accounts/password_reset_complete.html"
