"""Finished matches for the browser tests, played in the running site's own database through
the services (``manage.py shell``), so that the replay page has something to show."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent

#: ``finish(table, host, seed)``: random legal moves through the services until the match is
#: over (the host deals each next round).
FINISH = """
import random
from apps.rules.engine import legal_dict
from apps.tables import game, services

def finish(table, host, seed):
    rng = random.Random(seed)
    services.start_match(user=host, table_id=table.pk)
    while True:
        table.refresh_from_db()
        engine = game.restore(table.current_match)
        rnd = engine.current
        if rnd is None:
            if engine.over:
                return
            services.next_round(user=host, table_id=table.pk)
            continue
        seat = table.seats.get(index=rnd.turn)
        move = legal_dict(*rng.choice(rnd.legal()))
        services.play_move(user=seat.user, table_id=table.pk,
                           round_number=len(engine.rounds) - 1, ply=len(rnd.history),
                           tile=move.get("play"), end=move.get("end"),
                           is_pass=bool(move.get("pass")))
"""

#: A public two-player draw match, hosted by dani against ana (the people of
#: test_table_page.py), finished: prints {"replay": its table's code}.
PUBLIC_MATCH = FINISH + """
import json
from django.contrib.auth import get_user_model
U = get_user_model()
dani, ana = U.objects.get(username="dani"), U.objects.get(username="ana")
table = services.create_table(host=dani, preset="draw", players=2, public=True,
                              options={"target": 10, "turn_seconds": None})
services.join_table(user=ana, table_id=table.pk)
finish(table, dani, 4)
print(json.dumps({"replay": table.code}))
"""


def shell(site, code: str, env: dict | None = None) -> dict:
    """Run ``code`` in the site's ``manage.py shell``; its last printed line, as JSON."""
    child = {k: v for k, v in os.environ.items()
             if k not in {"REDIS_URL", "DATABASE_URL", "PYTEST_EMBEDDED_REDIS"}}
    child.update(VAR_DIR=str(site.var_dir), DEBUG="1", **(env or {}))
    out = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT,
                         env=child, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])
