"""Being told when another process writes a file, without polling it: Linux's inotify.

In SQLite shared by several processes (:mod:`kplane.core.storage.sqlite`) each writer touches
a file once its commit is visible, so a change of that file is the cue to read the new revisions. Two libc
calls through ctypes (as ``kplane.core.serving.workers`` calls prctl) rather than a dependency;
where inotify is missing, callers fall back to polling.
"""

from __future__ import annotations

import contextlib
import ctypes
import os

_IN_MODIFY = 0x00000002  # linux/inotify.h
_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = os.O_CLOEXEC


class FileChanges:
    """A descriptor that turns readable when ``path`` is written (``fileno``, for select);
    ``clear`` reads away what it reported."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    @classmethod
    def of(cls, path: str) -> FileChanges | None:
        """Changes of ``path`` (which must exist), or None where inotify is not to be had."""
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        except (OSError, AttributeError):
            return None
        if fd < 0:
            return None
        if libc.inotify_add_watch(fd, os.fsencode(path), _IN_MODIFY) < 0:
            os.close(fd)
            return None
        return cls(fd)

    def fileno(self) -> int:
        return self._fd

    def clear(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while os.read(self._fd, 65536):
                pass

    def close(self) -> None:
        os.close(self._fd)
