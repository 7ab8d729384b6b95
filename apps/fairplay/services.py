"""The one thing a person writes here: a host's minimum share for their table; and staff's
decision on a collusion report.

Every other write is the record's, inside the tables' own transactions (:mod:`.record`), or
the collusion check's (:mod:`.judging`).
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.core.errors import ServiceError
from apps.moderation import services as moderation
from apps.tables.models import Table
from apps.tables.services import Outcome, lock_table, require_open, require_signed_in, touch

from . import rules
from .models import CollusionReport, PairTally, TableMinimum

#: The event the table's version carries when its minimum changes (the seats' part of the
#: state is rebuilt for it: ``state_part.REFRESH_ON``).
MINIMUM_EVENT = "fairplay"


def set_minimum(*, user, table_id: int, minimum: int) -> Outcome:
    """The host lets only people with at least ``minimum`` percent sit at their table (0:
    anyone), before its match starts. Quick tables seat whoever comes, and practice tables
    nobody else: neither takes one."""
    require_signed_in(user)
    low, high = rules.MINIMUM_RANGE
    if isinstance(minimum, bool) or not isinstance(minimum, int) \
            or not low <= minimum <= high:
        raise ServiceError(_("Choose a share between %(low)s and %(high)s.") % {
            "low": low, "high": high}, code="bad_minimum")
    with transaction.atomic():
        table = lock_table(table_id)
        if table.host_id != user.pk:
            raise ServiceError(_("Only the host can do that."), code="not_host")
        require_open(table)
        if table.practice or table.quick:
            raise ServiceError(_("Quick play and practice tables take no minimum share."),
                               code="not_here")
        if table.state != Table.State.WAITING:
            raise ServiceError(_("The match has started: the minimum share can no longer "
                                 "change."), code="started")
        if minimum:
            TableMinimum.objects.update_or_create(
                table_id=table.pk, defaults={"minimum": minimum, "set_by": user,
                                             "set_at": timezone.now()})
        else:
            TableMinimum.objects.filter(table_id=table.pk).delete()
        # A version of its own, so every page at the table hears of it.
        return touch(table_id=table.pk, events=[{"kind": MINIMUM_EVENT, "minimum": minimum}])


# -- the collusion check's reports (staff) ----------------------------------------------------

#: Staff's two decisions on a collusion report.
DECISIONS = ("dismiss", "act")


def decide_collusion(*, actor, report_id: int, decision: str, note: str) -> CollusionReport:
    """Staff close a collusion report: ``dismiss`` (nothing wrong found) or ``act`` (they act
    with the moderation tools: a ban, a warning). The decision and its note close the
    moderation report it opened, which writes the modlog; the pair is reported again only once
    the evidence grows by the threshold again. Nothing here touches the pair's accounts."""
    if decision not in DECISIONS:
        raise ServiceError(_("Choose to dismiss the report or to act on it."),
                           code="bad_decision")
    note = " ".join((note or "").split())
    if not note:
        raise ServiceError(_("Say what you found."), code="no_note")
    label = _("Dismissed") if decision == "dismiss" else _("Acted on")
    with transaction.atomic():
        case = CollusionReport.objects.select_for_update().filter(pk=report_id).first()
        if case is None:
            raise ServiceError(_("No such report."), code="no_report")
        if case.status != CollusionReport.Status.OPEN:
            raise ServiceError(_("That report is already closed."), code="already")
        if case.report_id is not None:
            # Checks the staff right and writes the modlog (moderation's CLOSE_REPORT).
            moderation.close_report(actor=actor, report_id=case.report_id,
                                    resolution=f"{label}: {note}")
        else:
            moderation.require_perm(actor, "handle_report")
        case.status = (CollusionReport.Status.DISMISSED if decision == "dismiss"
                       else CollusionReport.Status.ACTED)
        case.handled_by, case.closed_at = actor, timezone.now()
        case.save(update_fields=["status", "handled_by", "closed_at"])
        pair = PairTally.objects.select_for_update().get(pk=case.pair_id)
        pair.llr_at_close = pair.llr
        pair.save(update_fields=["llr_at_close"])
    return case
