"""A simulated container's main process: whether it exits, when, and with which code.

* An image whose tag holds ``exit-N`` (``busybox:exit-1``, ``app:v2-exit-3``) runs for the
  pod's run time, then exits with code N.
* Otherwise a container of a Pod whose ``restartPolicy`` is Never or OnFailure (a Job's) runs for
  the run time, then exits 0; one of an Always Pod runs until it is stopped.

The run time is the Pod's ``kplane.io/run-seconds`` annotation, else the kubelet's default.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]

RUN_SECONDS = "kplane.io/run-seconds"
MAX_RUN_SECONDS = 365 * 24 * 3600.0
_EXIT_TAG = re.compile(r"(?:^|[-_.])exit-(\d{1,3})(?:$|[-_.])")


@dataclass(frozen=True, slots=True)
class Process:
    """``exit_code`` None: it runs until stopped; else it exits with it ``seconds`` after it starts."""

    exit_code: int | None
    seconds: float = 0.0


def run_seconds(pod: Obj, default: float) -> float:
    """The Pod's run time: its annotation when it is a finite, non-negative number, else ``default``."""
    text = ((pod.get("metadata") or {}).get("annotations") or {}).get(RUN_SECONDS)
    try:
        value = float(text) if text is not None else default
    except ValueError:
        return default
    return min(value, MAX_RUN_SECONDS) if math.isfinite(value) and value >= 0 else default


def image_exit_code(image: str) -> int | None:
    """N of an ``exit-N`` tag (0-255), None for any other image."""
    tag = image.rpartition("/")[2].partition("@")[0].partition(":")[2]
    found = _EXIT_TAG.search(tag)
    return int(found.group(1)) % 256 if found else None


def main_process(pod: Obj, container: Obj, *, default_seconds: float) -> Process:
    """How ``container`` of ``pod`` runs, as described in this module's docstring."""
    seconds = run_seconds(pod, default_seconds)
    code = image_exit_code(str(container.get("image") or ""))
    if code is not None:
        return Process(code, seconds)
    if ((pod.get("spec") or {}).get("restartPolicy") or "Always") != "Always":
        return Process(0, seconds)
    return Process(None)
