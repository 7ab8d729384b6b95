import logging
import os

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

log = logging.getLogger(__name__)


def _survive_restores_after_release() -> None:
    """Keep the worker alive when Redis restarts (kombu 5.7, every pool).

    On a lost broker connection Celery releases the connection, and closing its channel then
    restores the unacknowledged messages through that released connection: kombu's
    ``_connparams`` reads ``connection.client``, now None, and the AttributeError is
    "unrecoverable": the worker exits (kombu #582 and #970 show the same path). There are
    always unacknowledged messages here, since every turn deadline is an ETA task held by the
    worker. Losing their restore costs nothing: a Redis that restarted has no such messages to
    restore, one that kept them redelivers them after the visibility timeout (each carries its
    position, so a late one changes nothing), and beat's one-second sweep acts on every due
    deadline meanwhile. ``tests/tables/test_chaos.py`` restarts Redis under a running worker.
    """
    from kombu.transport.virtual import base

    restore = base.QoS.restore_unacked_once
    if getattr(restore, "survives_release", False):
        return

    def restore_unacked_once(self, stderr=None):
        try:
            return restore(self, stderr)
        except AttributeError:  # the connection was released first (see above)
            log.warning("could not restore unacknowledged messages: the broker connection "
                        "was already released; the sweep covers their deadlines")
            return None

    restore_unacked_once.survives_release = True
    base.QoS.restore_unacked_once = restore_unacked_once


_survive_restores_after_release()


def _connections_as_around_a_request(**_kwargs) -> None:
    """Around each task, what Django does around each request: drop a connection that broke
    (PostgreSQL restarted) or outlived CONN_MAX_AGE, keep the others (settings'
    CELERY_DB_REUSE_MAX says why Celery's own closing is held back)."""
    from django.db import close_old_connections

    close_old_connections()


signals.task_prerun.connect(_connections_as_around_a_request, weak=False)
signals.task_postrun.connect(_connections_as_around_a_request, weak=False)


def _start_dispatcher(**_kwargs) -> None:
    """Each worker fires the tables' due timers (``apps.tables.dispatch``)."""
    # Imported here: this module is read before Django is set up; the worker is ready after.
    from apps.tables import dispatch

    dispatch.start()


def _stop_dispatcher(**_kwargs) -> None:
    from apps.tables import dispatch

    dispatch.stop()


signals.worker_ready.connect(_start_dispatcher, weak=False)
signals.worker_shutting_down.connect(_stop_dispatcher, weak=False)

app = Celery("config")
# Every CELERY_* setting in config/settings.py (broker URL, beat schedule, ...) applies here.
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
