"""Files only their owner may read: the state (Secrets among it) and the kubeconfig.

Modes are set explicitly rather than left to the umask, which may be 000: folders 0700, files
0600. A folder or file found with looser modes is tightened, and the folder's case logged, so an
operator learns that it was readable by others until now.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600


def new_private_dir(path: Path) -> None:
    """Create ``path`` (and missing parents) as 0700 if it is missing; an existing one is left as it is."""
    try:
        path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    except FileExistsError:  # a file is in the way: "File exists" would not say what is wrong
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path)) from None


def private_dir(path: Path) -> None:
    """Create ``path`` as 0700, or tighten it if others may enter it."""
    new_private_dir(path)
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        path.chmod(DIR_MODE)
        log.warning("%s was accessible to other users (mode %04o): tightened to %04o", path, mode, DIR_MODE)


def open_private(path: str | os.PathLike[str], flags: int) -> int:
    """``os.open`` creating the file as 0600; an existing file is tightened to 0600 too."""
    fd = os.open(path, flags | os.O_CREAT, FILE_MODE)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != FILE_MODE:
            os.fchmod(fd, FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def tighten(path: str | os.PathLike[str]) -> None:
    """Make an existing file 0600 (a missing one is fine: nothing to protect)."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return
    if mode != FILE_MODE:
        os.chmod(path, FILE_MODE)


def write_private(path: Path, data: bytes) -> None:
    """Replace ``path`` atomically with ``data``; the temporary file is 0600 from its creation."""
    tmp = path.with_name(path.name + ".tmp")
    fd = open_private(tmp, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.replace(tmp, path)
