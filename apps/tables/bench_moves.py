"""``python -m apps.tables.bench_moves``: the per-move cost benchmark (the management command
of the same name says what it measures), on a fresh migrated database created on
``DATABASE_URL``'s server and dropped afterwards."""

import os
import secrets
import sys

if __name__ == "__main__":
    from apps.realtime import procs

    url = procs.require_postgres(os.environ.get("DATABASE_URL"))
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    with procs.fresh_database(url, "benchmv") as fresh:
        os.environ["DATABASE_URL"] = fresh
        import django
        from django.core.management import call_command

        django.setup()
        call_command("bench_moves", *sys.argv[1:])
        from django.db import connections

        connections.close_all()
