"""Matches played before positions were kept get theirs from a replay of their moves."""

from django.db import migrations


def backfill(apps, schema_editor):
    from apps.rules import harness

    Match = apps.get_model("tables", "Match")
    for match in Match.objects.filter(position__isnull=True).iterator():
        rounds = list(match.rounds.filter(voided=False).order_by("number"))
        if not rounds:
            continue
        record = {"rules": dict(match.rules), "players": match.players, "rounds": [
            {"hands": r.hands, "boneyard": r.boneyard, "opener": r.opener,
             "moves": [m_record(m) for m in r.moves.order_by("ply")]} for r in rounds]}
        engine = harness.load(record)
        match.position = {"round_id": rounds[-1].pk, "engine": engine.to_state()}
        match.save(update_fields=["position"])


def m_record(move) -> dict:
    if move.is_pass:
        return {"seat": move.seat, "pass": True}
    out = {"seat": move.seat, "play": move.tile}
    if move.end:
        out["end"] = move.end
    return out


class Migration(migrations.Migration):
    dependencies = [("tables", "0004_positions_events_leases")]
    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
