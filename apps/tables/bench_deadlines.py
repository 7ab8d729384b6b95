"""``python -m apps.tables.bench_deadlines``: the deadline benchmark (see the management
command of the same name for what it measures)."""

import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("bench_deadlines", *sys.argv[1:])
