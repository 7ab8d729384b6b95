"""A review computed in a process of its own (pure Python, no Django: the import contracts say
so), so that the worker can stop one that takes too long and its search does not hold the
worker's interpreter while the tables' timers and the slow bots' turns need it.

``start(record, seed, deals)`` starts the process; it sends ``("progress", done, total)`` after
each judged move and ends with ``("result", review)`` or ``("error", text)``. A worker that went
away closes the pipe: the child's next send fails and it ends.
"""

from __future__ import annotations

import multiprocessing
import traceback


def work(record: dict, seed: int, deals: int | None, conn) -> None:
    # Imported here, in the spawned child, so that the worker importing this module to start
    # it does not load the review's search for nothing.
    from apps.bots.review import review_budget, review_record

    def progress(done: int, total: int) -> None:
        conn.send(("progress", done, total))

    try:
        result = review_record(record, seats=None, seed=seed, progress=progress,
                               budget=review_budget(deals))
    except (BrokenPipeError, EOFError, OSError):
        return  # the worker went away: nobody is waiting for the review
    except Exception as err:  # noqa: BLE001 (reported to the worker, which logs it)
        conn.send(("error", f"{type(err).__name__}: {err}\n{traceback.format_exc()}"))
        return
    conn.send(("result", result))


def start(record: dict, seed: int, deals: int | None):
    """The running process and the worker's end of its pipe. Spawned, not forked: the worker
    has threads and database connections a fork would copy."""
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe(duplex=False)
    process = context.Process(target=work, args=(record, seed, deals, theirs), daemon=True,
                              name="review")
    process.start()
    theirs.close()
    return process, ours
