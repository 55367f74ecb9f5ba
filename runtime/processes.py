"""Whether a process of this machine still runs (leases and locks held by a
process id: a graph store's version leases, the class archive's build)."""

from __future__ import annotations

import os


def running(pid: int) -> bool:
    """Does the process ``pid`` run (one of another user's counts)?"""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
