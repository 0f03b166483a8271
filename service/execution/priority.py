"""The background processes' place on the CPU: below every reward process.

Niceness alone still gives a niced process a tenth of a core next to a busy reward worker;
Linux's SCHED_IDLE class runs it only on CPU time nothing else wants. Both are inherited by the
threads and processes it starts afterwards (its pool processes and their killable children).
"""

from __future__ import annotations

import logging
import os

log = logging.getLogger(__name__)


def lower_priority(nice: int, idle: bool) -> None:
    """Lower this process (its calling thread, and everything it starts from now on)."""
    if nice:
        os.nice(nice)
    if idle and hasattr(os, "sched_setscheduler"):
        try:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        except OSError:  # not Linux, or a sandbox that forbids it: niceness still applies
            log.warning("could not enter the idle scheduling class", exc_info=True)
