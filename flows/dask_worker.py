"""Set-up of each Dask worker of the LocalCluster a run starts (a `preload` module: Dask imports it in
the worker process and calls `dask_setup` with the worker).

A closing worker's last heartbeat can still be on its way to the scheduler when the worker closes its
connections; `distributed` then logs "Failed to communicate with scheduler during heartbeat" with a
traceback, although nothing failed. On a loaded machine this happens at most shutdowns. The filter
drops that one record, and only while the worker is closing: a heartbeat that fails in a running
worker is still reported.
"""

from __future__ import annotations

import logging
from typing import Any

HEARTBEAT_FAILED = "Failed to communicate with scheduler during heartbeat"


class ShutdownHeartbeatFilter(logging.Filter):
    def __init__(self, worker: Any):
        super().__init__()
        self.worker = worker

    def filter(self, record: logging.LogRecord) -> bool:
        closing = getattr(self.worker.status, "name", "") in {"closing", "closed", "closing_gracefully"}
        return not (closing and record.getMessage().startswith(HEARTBEAT_FAILED))


def dask_setup(worker: Any) -> None:
    logging.getLogger("distributed.worker").addFilter(ShutdownHeartbeatFilter(worker))
