"""``python -m apps.tables.bench_deadlines``: the deadline benchmark (see the management
command of the same name for what it measures), on a fresh migrated database created on
``DATABASE_URL``'s server and dropped afterwards, so that it never fills a real one."""

import os
import secrets
import sys

if __name__ == "__main__":
    from apps.realtime import procs

    url = procs.require_postgres(os.environ.get("DATABASE_URL"))
    # A tool run from a shell: settings refuse to start without a key when DEBUG is off, and
    # DEBUG on would keep every query in memory for the whole run.
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    with procs.fresh_database(url, "bench") as fresh:
        os.environ["DATABASE_URL"] = fresh
        import django
        from django.core.management import call_command

        django.setup()
        call_command("bench_deadlines", *sys.argv[1:])
        from django.db import connections

        connections.close_all()
