"""The one thing a person writes here: a host's minimum share for their table.

Every other write is the record's, inside the tables' own transactions (:mod:`.record`).
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.core.errors import ServiceError
from apps.tables.models import Table
from apps.tables.services import Outcome, lock_table, require_open, require_signed_in, touch

from . import rules
from .models import TableMinimum

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
