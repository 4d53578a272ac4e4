"""The log backend: events written as lines by one thread, never by the event loop.

Requests hand their records to a bounded queue (``--audit-log-batch-buffer-size``) and a writer
thread encodes and writes them, as many as are waiting in one write. In ``blocking`` mode (kube's
default for the log) a request goes on only once its record is written, awaiting it without
holding up the loop; in ``batch`` mode it does not wait. Either way a full queue drops the record
with a logged warning rather than stalling requests (kube's batch buffer drops the same way).

Rotation (``--audit-log-maxsize/-maxbackup/-maxage``) keeps lumberjack's semantics, which
kube-apiserver uses: a file past the size is renamed ``NAME-<UTC time>.EXT`` and a new one begun;
backups beyond the count or older than the age are deleted, 0 meaning no limit. The standard
library's ``RotatingFileHandler`` differs in each of those points (``NAME.1`` names, no rotation
at all for a count of 0, no age, files made by the umask), hence this small writer. Every file
is created 0600: an audit log holds request bodies, Secrets among them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import BinaryIO

from kplane.core.audit.event import Record
from kplane.core.audit.options import BLOCKING, LEGACY, AuditOptions
from kplane.core.privatefiles import new_private_dir, open_private

log = logging.getLogger(__name__)

MEGABYTE = 1024 * 1024
BACKUP_TIME = "%Y-%m-%dT%H-%M-%S.%f"  # lumberjack's 2006-01-02T15-04-05.000, cut to milliseconds below
_DROP_WARNING_EVERY = 10.0  # seconds between warnings about dropped events


class RotatingFile:
    """An append-only file of at most ``max_bytes`` (0: no limit), rotated as lumberjack does."""

    def __init__(self, path: Path, max_bytes: int = 0, max_backups: int = 0, max_age_days: int = 0) -> None:
        self.path = path
        self.max_bytes, self.max_backups, self.max_age_days = max_bytes, max_backups, max_age_days
        new_private_dir(path.parent)
        self._file = self._open()

    def _open(self) -> BinaryIO:
        return os.fdopen(open_private(self.path, os.O_WRONLY | os.O_APPEND), "ab")

    def write(self, data: bytes) -> None:
        size = self._file.tell()
        if self.max_bytes and size and size + len(data) > self.max_bytes:
            self._rotate()
        self._file.write(data)

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def _rotate(self) -> None:
        self._file.close()
        stamp = datetime.now(timezone.utc).strftime(BACKUP_TIME)[:-3]
        os.replace(self.path, self.path.with_name(f"{self.path.stem}-{stamp}{self.path.suffix}"))
        self._file = self._open()
        self._remove_old_backups()

    def backups(self) -> list[tuple[datetime, Path]]:
        """The rotated files, newest first."""
        found = []
        prefix, suffix = self.path.stem + "-", self.path.suffix
        for entry in self.path.parent.iterdir():
            name = entry.name
            if not (name.startswith(prefix) and name.endswith(suffix)) or len(name) <= len(prefix) + len(suffix):
                continue
            try:
                moment = datetime.strptime(name[len(prefix):len(name) - len(suffix)], BACKUP_TIME)
            except ValueError:
                continue
            found.append((moment.replace(tzinfo=timezone.utc), entry))
        return sorted(found, reverse=True)

    def _remove_old_backups(self) -> None:
        backups = self.backups()
        doomed = backups[self.max_backups:] if self.max_backups else []
        if self.max_age_days:
            cutoff = datetime.now(timezone.utc) - timedelta(days=self.max_age_days)
            doomed += [b for b in backups if b[0] < cutoff and b not in doomed]
        for _, path in doomed:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


class _Stdout:
    def write(self, data: bytes) -> None:
        sys.stdout.buffer.write(data)

    def flush(self) -> None:
        sys.stdout.buffer.flush()

    def close(self) -> None:
        self.flush()


_STOP = object()


class LogBackend:
    """``--audit-log-path``'s writer: :meth:`process` from the loop, lines written by a thread."""

    def __init__(self, options: AuditOptions) -> None:
        self.options = options
        path = options.log_path
        self.out: RotatingFile | _Stdout = _Stdout() if path == "-" else RotatingFile(
            Path(path), options.log_max_size * MEGABYTE, options.log_max_backups, options.log_max_age)
        self.blocking = options.log_mode == BLOCKING
        self._encode = Record.encode_legacy if options.log_format == LEGACY else Record.encode_json
        self._queue: queue.Queue[object] = queue.Queue(maxsize=options.log_buffer_size)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.dropped = 0
        self._warned_at = 0.0

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._run, name="audit-log", daemon=True)
        self._thread.start()

    async def process(self, record: Record) -> None:
        """Queue ``record``; in blocking mode, wait until it is written."""
        future = self._loop.create_future() if self.blocking and self._loop is not None else None
        try:
            self._queue.put_nowait((record, future))
        except queue.Full:
            self._dropped()
            return
        if future is not None:
            await future

    def process_nowait(self, record: Record) -> None:
        """Queue ``record`` without waiting (a request being cancelled cannot wait)."""
        try:
            self._queue.put_nowait((record, None))
        except queue.Full:
            self._dropped()

    def _dropped(self) -> None:
        self.dropped += 1
        now = time.monotonic()
        if now - self._warned_at >= _DROP_WARNING_EVERY:
            self._warned_at = now
            log.warning("the audit log cannot keep up: %d events dropped so far (the queue holds %d)",
                        self.dropped, self.options.log_buffer_size)

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            while len(batch) < self.options.log_buffer_size:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = _STOP in batch
            self._write([entry for entry in batch if entry is not _STOP])  # type: ignore[misc]
            if stop:
                return

    def _write(self, batch: list[tuple[Record, asyncio.Future[None] | None]]) -> None:
        lines = []
        for record, _ in batch:
            try:
                lines.append(self._encode(record))
            except Exception:  # noqa: BLE001  # one bad event is logged, the others are written
                log.exception("cannot encode the audit event %s", record.event.audit_id)
        try:
            self.out.write(b"".join(lines))
            self.out.flush()
        except OSError as err:
            log.error("cannot write the audit log %s: %s", self.options.log_path, err)
        for _, future in batch:
            if future is not None and self._loop is not None:
                with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
                    self._loop.call_soon_threadsafe(_resolve, future)

    async def close(self) -> None:
        """Write what is queued, then stop the thread and close the file."""
        if self._thread is not None:
            await asyncio.to_thread(self._queue.put, _STOP)
            await asyncio.to_thread(self._thread.join)
            self._thread = None
        self.out.close()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
