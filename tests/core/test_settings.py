from pathlib import Path

import pytest

from config.env import SQLITE_OPTIONS, env_list, parse_database_url, redis_urls


def test_sqlite_relative_url_is_under_base_dir():
    config = parse_database_url("sqlite:///var/db.sqlite3", base_dir=Path("/srv/app"))
    assert config["ENGINE"] == "django.db.backends.sqlite3"
    assert config["NAME"] == Path("/srv/app/var/db.sqlite3")
    assert config["OPTIONS"] == {
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
    }


def test_sqlite_absolute_and_memory_urls():
    assert parse_database_url("sqlite:////tmp/x/db.sqlite3")["NAME"] == Path("/tmp/x/db.sqlite3")
    assert parse_database_url("sqlite://:memory:")["NAME"] == ":memory:"


def test_sqlite_options_are_copied_not_shared():
    config = parse_database_url("sqlite:///a.db")
    config["OPTIONS"]["timeout"] = 1
    assert SQLITE_OPTIONS["timeout"] == 20


@pytest.mark.parametrize("scheme", ["postgres", "postgresql"])
def test_postgres_url(scheme):
    config = parse_database_url(f"{scheme}://bob:s%40cret@db.example:6543/club?sslmode=require")
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert (config["NAME"], config["USER"], config["PASSWORD"]) == ("club", "bob", "s@cret")
    assert (config["HOST"], config["PORT"]) == ("db.example", "6543")
    assert config["OPTIONS"] == {"sslmode": "require"}


def test_postgres_url_without_password_or_port():
    config = parse_database_url("postgres://postgres@127.0.0.1/postgres")
    assert (config["USER"], config["PASSWORD"], config["HOST"], config["PORT"]) == (
        "postgres",
        "",
        "127.0.0.1",
        "",
    )


def test_unknown_database_scheme_is_refused():
    with pytest.raises(ValueError):
        parse_database_url("mysql://u@h/db")


def test_redis_urls_for_tcp_and_unix_socket():
    assert redis_urls("redis://127.0.0.1:6379/0") == {
        "redis": "redis://127.0.0.1:6379/0",
        "celery": "redis://127.0.0.1:6379/0",
    }
    assert redis_urls("unix:///tmp/r/redis.socket") == {
        "redis": "unix:///tmp/r/redis.socket",
        "celery": "redis+socket:///tmp/r/redis.socket",
    }
    assert redis_urls("redis+socket:///tmp/r.sock")["redis"] == "unix:///tmp/r.sock"


def test_env_list(monkeypatch):
    monkeypatch.setenv("SOME_HOSTS", " a.example, b.example ,")
    assert env_list("SOME_HOSTS", ["x"]) == ["a.example", "b.example"]
    monkeypatch.delenv("SOME_HOSTS")
    assert env_list("SOME_HOSTS", ["x"]) == ["x"]


def test_live_settings_follow_the_environment(settings):
    import os

    engine = settings.DATABASES["default"]["ENGINE"]
    if os.environ.get("DATABASE_URL", "").startswith("postgres"):
        assert engine == "django.db.backends.postgresql"
    else:
        assert engine == "django.db.backends.sqlite3"
        assert settings.DATABASES["default"]["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    hosts = settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"]
    assert [h["address"] for h in hosts] == [redis_urls(os.environ["REDIS_URL"])["redis"]]
    # redis-py 8's default socket_timeout (5 s) equals the layer's blocking reads and closed
    # every quiet socket: the layer must say a longer one.
    assert all(h["socket_timeout"] > 5 for h in hosts)
    assert settings.CELERY_BROKER_URL == redis_urls(os.environ["REDIS_URL"])["celery"]


def test_the_default_redis_prefix_is_the_sites_own():
    """Two sites on one Redis without a REDIS_KEY_PREFIX each: their doorbells' channels must
    not cross (pub/sub ignores Redis's database number)."""
    from config.env import default_key_prefix

    prod = parse_database_url("postgres://u@db1:5432/club")
    assert default_key_prefix(prod).startswith("domino-club-")
    # Every process of the site makes the same one, however it reaches the database.
    assert default_key_prefix(prod) == default_key_prefix(
        parse_database_url("postgres://worker:pw@10.0.0.5/club?sslmode=require"))
    others = [parse_database_url(url, base_dir=Path("/srv")) for url in (
        "postgres://u@db1:5432/club_staging",  # another database on the same server
        "sqlite:///var/db.sqlite3", "sqlite:////other/var/db.sqlite3")]
    prefixes = {default_key_prefix(d) for d in [prod, *others]}
    assert len(prefixes) == 4
    assert all(" " not in p and ":" not in p for p in prefixes)


@pytest.mark.slow
def test_settings_take_the_prefix_from_the_environment_else_from_the_database(tmp_path):
    import os
    import subprocess
    import sys

    def prefix(**env) -> str:
        base = {k: v for k, v in os.environ.items() if k != "REDIS_KEY_PREFIX"}
        done = subprocess.run(
            [sys.executable, "-c", "from django.conf import settings; "
             "print(settings.REDIS_KEY_PREFIX, settings.CHANNEL_LAYERS['default']"
             "['CONFIG']['prefix'])"],
            env={**base, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "1", **env},
            capture_output=True, text=True, check=True, cwd=Path(__file__).parents[2])
        key, layer = done.stdout.split()
        assert key == layer
        return key

    one = prefix(DATABASE_URL=f"sqlite:///{tmp_path}/one.sqlite3")
    two = prefix(DATABASE_URL=f"sqlite:///{tmp_path}/two.sqlite3")
    assert one != two and one.startswith("domino-one-")
    assert prefix(DATABASE_URL=f"sqlite:///{tmp_path}/one.sqlite3",
                  REDIS_KEY_PREFIX="mine") == "mine"
