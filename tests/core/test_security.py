"""Production security settings: `check --deploy`, HTTPS-only cookies and headers, and the
Content-Security-Policy every page sends.

The production environment is read from the README's production section and from
docker/docker-compose.yml, so the documented settings are the ones tested.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import reverse

ROOT = Path(__file__).resolve().parent.parent.parent


def readme_production_env() -> dict[str, str]:
    """The first ```sh block of the README's "Production" section, as KEY=VALUE pairs."""
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Production", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    env = {}
    for line in block.splitlines():
        line = line.split("#", 1)[0].strip()
        if "=" in line:
            key, value = line.split("=", 1)
            env[key.strip()] = value.strip()
    return env


def compose_env() -> dict[str, str]:
    """docker-compose's app environment with nothing set by the operator but SECRET_KEY:
    ``${VAR:-default}`` gives the default, ``${VAR:?...}`` (required) is left out."""
    text = (ROOT / "docker" / "docker-compose.yml").read_text()
    block = text.split("  environment:\n", 1)[1].split("\n  depends_on:", 1)[0]
    env = {}
    for line in block.splitlines():
        key, _sep, value = line.strip().partition(": ")
        value = value.strip().strip('"')
        match = re.fullmatch(r"\$\{(\w+)(:-|:\?)([^}]*)\}", value)
        if match and match.group(2) == ":?":
            continue
        if match:
            value = match.group(3)
        else:
            value = re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", value)
        env[key] = value
    return env


def django_env(extra: dict[str, str]) -> dict[str, str]:
    """A child process environment with no test-only variable and a real secret."""
    env = {k: v for k, v in os.environ.items()
           if k not in {"REDIS_URL", "DATABASE_URL", "PYTEST_EMBEDDED_REDIS", "DEBUG",
                        "DJANGO_TESTING", "SECURE_PROXY_SSL"}}
    env.update(extra)
    env["SECRET_KEY"] = secrets.token_urlsafe(50)
    return env


def check_deploy(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env=django_env(env), capture_output=True, text=True, timeout=120)


def test_the_readme_documents_a_production_environment():
    env = readme_production_env()
    assert env["DEBUG"] == "0" and env["SECURE_PROXY_SSL"] == "1"
    assert {"SECRET_KEY", "ALLOWED_HOSTS", "CSRF_TRUSTED_ORIGINS", "DATABASE_URL",
            "REDIS_URL"} <= set(env)


@pytest.mark.parametrize("source", [readme_production_env, compose_env],
                         ids=["readme", "docker-compose"])
@pytest.mark.slow
def test_check_deploy_is_clean_with_the_production_settings(source):
    result = check_deploy(source())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout, result.stdout


PROBE = """
import json
from django.conf import settings
from django.core.management import call_command
from django.test import Client
call_command("migrate", verbosity=0)  # the home page lists the lobby
client = Client(HTTP_HOST="club.example")
page = client.get("/", secure=True)
plain = client.get("/lobby/")
health = client.get("/healthz")
lang = client.post("/i18n/setlang/", {"language": "en", "next": "/"}, secure=True)
cookie = lang.cookies[settings.LANGUAGE_COOKIE_NAME]
print(json.dumps({
    "hsts": page.get("Strict-Transport-Security"),
    "csp": page.get("Content-Security-Policy"),
    "plain": [plain.status_code, plain.get("Location")],
    "health": health.status_code,
    "cookie": {k: cookie[k] for k in ("secure", "samesite", "httponly")},
    "session_secure": settings.SESSION_COOKIE_SECURE,
    "csrf_secure": settings.CSRF_COOKIE_SECURE,
}))
"""


@pytest.mark.slow
def test_production_headers_cookies_and_redirect():
    env = readme_production_env()
    # DJANGO_TESTING: static files from the source folders (no collectstatic manifest).
    env.update(ALLOWED_HOSTS="club.example", DATABASE_URL="sqlite://:memory:",
               DJANGO_TESTING="1")
    result = subprocess.run([sys.executable, "manage.py", "shell", "-c", PROBE], cwd=ROOT,
                            env=django_env(env), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout.strip().splitlines()[-1])
    assert got["hsts"] == "max-age=31536000; includeSubDomains; preload"
    assert "connect-src 'self' wss://club.example" in got["csp"]
    assert got["plain"] == [301, "https://club.example/lobby/"]
    # The container health check asks over plain HTTP and is not redirected (503: no services).
    assert got["health"] in (200, 503)
    assert got["cookie"] == {"secure": True, "samesite": "Lax", "httponly": True}
    assert got["session_secure"] and got["csrf_secure"]


def test_the_language_cookie_is_same_site_locally(client):
    response = client.post(reverse("set_language"), {"language": "en", "next": "/"})
    cookie = response.cookies["django_language"]
    assert cookie["samesite"] == "Lax" and cookie["httponly"] is True
    assert not cookie["secure"]  # plain HTTP in development: a Secure cookie would be lost


def directives(header: str) -> dict[str, list[str]]:
    out = {}
    for part in header.split(";"):
        words = part.split()
        if words:
            out[words[0]] = words[1:]
    return out


@pytest.mark.parametrize("secure,origin", [(False, "ws://testserver"),
                                           (True, "wss://testserver")])
def test_every_page_sends_a_policy_with_its_own_socket_origin(client, db, secure, origin):
    response = client.get(reverse("home"), secure=secure)
    policy = directives(response["Content-Security-Policy"])
    assert policy["connect-src"] == ["'self'", origin]
    assert policy["script-src"] == ["'self'"] and policy["style-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"]
    assert "'unsafe-inline'" not in response["Content-Security-Policy"]
    assert "'unsafe-eval'" not in response["Content-Security-Policy"]


def test_no_template_has_inline_script_style_or_handler():
    """What the policy refuses, caught before a browser sees it: the browser test
    (tests/browser/test_csp.py) loads the pages themselves."""
    inline = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>|<style\b"
                        r"|\sstyle=|\son[a-z]+=|javascript:", re.I)
    found = []
    for folder in (ROOT / "templates", *ROOT.glob("apps/*/templates")):
        for path in folder.rglob("*.html"):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if inline.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)
