"""Who may call each moderation service: anonymous, player, host, moderator, superuser.

Every refused call changes nothing and writes no log row; every allowed staff action writes
exactly one.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from apps.moderation import services as mod
from apps.moderation.models import Ban, ChatMessage, ModerationLog, Mute, Report
from apps.tables.services import ServiceError

from .conftest import ROLES, actor_for

STAFF = {"moderator", "superuser"}
PLAYERS = {"player", "host"}


def _chat(ctx):
    return ChatMessage.objects.create(table=ctx["table"], user=ctx["people"]["caio"],
                                      text="hello")


def _report(ctx):
    return Report.objects.create(reporter=ctx["people"]["bea"], table=ctx["table"],
                                 reported_user=ctx["people"]["caio"], reason="spam")


def _mute_caio(ctx):
    mod.mute(actor=ctx["people"]["root"], user_id=ctx["people"]["caio"].pk, minutes=10,
             reason="noise")


def _ban_caio(ctx):
    mod.ban(actor=ctx["people"]["root"], user_id=ctx["people"]["caio"].pk, days=3,
            reason="abuse")


#: action -> (setup, call, roles allowed, logs a staff action)
ACTIONS = {
    "post_chat": (None, lambda c, a: mod.post_chat(user=a, table_id=c["table"].pk, text="hi"),
                  PLAYERS, False),
    "report": (_chat, lambda c, a: mod.report(user=a, table_id=c["table"].pk, reason="abuse",
                                              message_id=c["setup"].pk), PLAYERS, False),
    "hide_message": (_chat, lambda c, a: mod.hide_message(actor=a, message_id=c["setup"].pk),
                     STAFF, True),
    "delete_message": (_chat, lambda c, a: mod.delete_message(actor=a,
                                                              message_id=c["setup"].pk),
                       {"superuser"}, True),
    "mute": (None, lambda c, a: mod.mute(actor=a, user_id=c["people"]["caio"].pk, minutes=5,
                                         reason="spam"), STAFF, True),
    "lift_mute": (_mute_caio, lambda c, a: mod.lift_mute(actor=a,
                                                         user_id=c["people"]["caio"].pk),
                  STAFF, True),
    "ban": (None, lambda c, a: mod.ban(actor=a, user_id=c["people"]["caio"].pk, days=7,
                                       reason="abuse"), {"superuser"}, True),
    "ban_forever": (None, lambda c, a: mod.ban(actor=a, user_id=c["people"]["caio"].pk,
                                               days=None, reason="abuse"),
                    {"superuser"}, True),
    "lift_ban": (_ban_caio, lambda c, a: mod.lift_ban(actor=a,
                                                      user_id=c["people"]["caio"].pk),
                 {"superuser"}, True),
    "close_table": (None, lambda c, a: mod.close_table(actor=a, table_id=c["table"].pk,
                                                       reason="abuse"), STAFF, True),
    "hide_table": (None, lambda c, a: mod.hide_table(actor=a, table_id=c["table"].pk),
                   STAFF, True),
    "rename_table": (None, lambda c, a: mod.rename_table(actor=a, table_id=c["table"].pk,
                                                         name="Table 1"), STAFF, True),
    "remove_player": (None, lambda c, a: mod.remove_player(actor=a, table_id=c["table"].pk,
                                                           seat_index=3, reason="abuse"),
                      STAFF, True),
    "close_report": (_report, lambda c, a: mod.close_report(actor=a, report_id=c["setup"].pk,
                                                            resolution="warned"),
                     STAFF, True),
}


def _snapshot(table):
    table.refresh_from_db()
    return (table.version, table.state, table.hidden, table.name,
            ChatMessage.objects.filter(hidden=False, deleted=False).count(),
            Mute.objects.filter(lifted_at__isnull=True).count(),
            Ban.objects.filter(lifted_at__isnull=True).count(),
            Report.objects.filter(status="open").count(),
            list(table.seats.values_list("user_id", "leaving")))


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("action", list(ACTIONS))
def test_permission_matrix(action, role, people, table):
    setup, call, allowed, logged = ACTIONS[action]
    ctx = {"people": people, "table": table}
    ctx["setup"] = setup(ctx) if setup else None
    logs = ModerationLog.objects.count()
    before = _snapshot(table)
    actor = actor_for(people, role)
    if role in allowed:
        call(ctx, actor)
        assert ModerationLog.objects.count() == logs + (1 if logged else 0)
        if logged:
            entry = ModerationLog.objects.order_by("-pk").first()
            assert entry.actor == actor and entry.action == action.replace("_forever", "")
            assert entry.before != entry.after
    else:
        with pytest.raises(ServiceError) as err:
            call(ctx, actor)
        assert err.value.code in {"not_signed_in", "forbidden", "not_seated"}
        assert str(err.value.message)
        assert ModerationLog.objects.count() == logs
        assert _snapshot(table) == before


def test_moderator_group_rights(db):
    codenames = set(Group.objects.get(name="moderator").permissions
                    .values_list("codename", flat=True))
    assert {"mute_user", "hide_message", "close_table", "hide_table", "rename_table",
            "remove_player", "handle_report", "observe_table"} <= codenames
    assert not codenames & {"ban_user", "ban_user_forever", "lift_ban", "delete_message"}


def test_staff_without_the_right_is_refused(people, table):
    people["mod"].groups.clear()
    from django.contrib.auth import get_user_model

    bare = get_user_model().objects.get(pk=people["mod"].pk)
    with pytest.raises(ServiceError) as err:
        mod.close_table(actor=bare, table_id=table.pk, reason="x")
    assert err.value.code == "forbidden"


def test_a_moderator_cannot_act_on_staff_or_themselves(people, table):
    with pytest.raises(ServiceError):
        mod.mute(actor=people["mod"], user_id=people["root"].pk, minutes=5, reason="x")
    with pytest.raises(ServiceError):
        mod.mute(actor=people["mod"], user_id=people["mod"].pk, minutes=5, reason="x")
    with pytest.raises(ServiceError):
        mod.ban(actor=people["root"], user_id=people["root"].pk, days=1, reason="x")
