"""A simulated container's main process: what it writes, whether it exits, when, and with which code.

* A container with a ``command`` (or ``args``) runs it through the container's shell
  (:mod:`.shell`): ``sh -c 'echo hi; sleep 5; exit 3'`` writes ``hi``, runs 5 seconds and exits 3;
  its output is the container's log. ``$(VAR)`` references are expanded first, as the kubelet does.
* The image's own process (no command, or a program the shell does not know, such as ``nginx``)
  writes the pod annotation ``log.kplane.io/<container>`` (its text, line by line) or a line saying
  it started. An image whose tag holds ``exit-N`` (``busybox:exit-1``, ``app:v2-exit-3``) then
  runs for the pod's run time and exits with code N (writing a line saying so). Otherwise one of a
  Pod whose ``restartPolicy`` is Never or OnFailure (a Job's) runs for the run time and exits 0;
  one of an Always Pod runs until it is stopped.

The run time is the Pod's ``kplane.io/run-seconds`` annotation, else the kubelet's default.
A script that never ends (``sleep infinity``, a loop past the shell's step limit) runs until the
container is stopped. The kubelet sees the containers' files and environment without ConfigMaps,
Secrets and Services (:class:`.files.Sources`), the API server with them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from kplane.plugins.core.containers import files
from kplane.plugins.core.containers.shell import STDOUT, Context, ImageProcess, Read, Run, Shell, Sleep, Write

Obj = dict[str, Any]

RUN_SECONDS = "kplane.io/run-seconds"
#: The pod annotation prefix of an image process's output: ``log.kplane.io/<container name>``.
OUTPUT_PREFIX = "log.kplane.io/"
MAX_RUN_SECONDS = 365 * 24 * 3600.0
#: The most bytes of output a main process keeps (the kubelet rotates a container's log at 10 MiB).
MAX_OUTPUT = 1 << 20
_EXIT_TAG = re.compile(r"(?:^|[-_.])exit-(\d{1,3})(?:$|[-_.])")


@dataclass(frozen=True, slots=True)
class Output:
    """``data`` written to ``stream`` (1 stdout, 2 stderr) ``seconds`` after the process started."""

    seconds: float
    stream: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Process:
    """``exit_code`` None: it runs until stopped; else it exits with it ``seconds`` after it starts.
    ``output``: what it writes, in order."""

    exit_code: int | None
    seconds: float = 0.0
    output: tuple[Output, ...] = ()


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


def command_of(container: Obj, env: dict[str, str]) -> list[str] | None:
    """The container's ``command`` + ``args`` with ``$(VAR)`` expanded; None: the image's own entrypoint."""
    command, args = container.get("command") or [], container.get("args") or []
    if not command and not args:
        return None
    return [files.expand(str(word), env) for word in [*command, *args]]


def context(pod: Obj, container: Obj, sources: files.Sources, *, image_process: bool) -> Context:
    """The shell's view of the container (``image_process``: unknown programs are the image's)."""
    return Context(env=files.container_env(pod, container, sources), files=files.container_files(pod, container, sources),
                   hostname=files.hostname(pod), image_process=image_process)


def main_process(pod: Obj, container: Obj, *, default_seconds: float, sources: files.Sources | None = None) -> Process:
    """How ``container`` of ``pod`` runs, as described in this module's docstring: its script run
    in virtual time (sleeps take no real time), bounded by the shell's step limit."""
    view = context(pod, container, sources or files.Sources(), image_process=True)
    started = files.started_at(pod, str(container.get("name") or ""))
    view.now = lambda: started + clock  # ``date`` tells the virtual time
    argv = command_of(container, view.env)
    seconds = run_seconds(pod, default_seconds)
    run = Shell(view).run_argv(argv) if argv is not None else _image_only()
    clock, size = 0.0, 0
    written: list[Output] = []
    sent: bytes | int | None = None
    while True:
        try:
            event = run.send(sent)
        except StopIteration as done:
            return Process(int(done.value) % 256, clock, tuple(written))
        sent = None
        if isinstance(event, Write):
            if size < MAX_OUTPUT:
                written.append(Output(clock, event.stream, event.data[:MAX_OUTPUT - size]))
                size += len(event.data)
        elif isinstance(event, Sleep):
            if event.seconds is None:
                return Process(None, clock, tuple(written))
            clock = min(clock + event.seconds, MAX_RUN_SECONDS)
        elif isinstance(event, Read):
            if container.get("stdin"):  # its stdin stays open: it waits for input forever
                return Process(None, clock, tuple(written))
        elif isinstance(event, ImageProcess):
            lines, code = _image_process(pod, container, event.argv, seconds)
            written += [Output(clock, STDOUT, line) for line in lines]
            if code is None:
                return Process(None, clock, tuple(written))
            clock = min(clock + seconds, MAX_RUN_SECONDS)
            if code:
                written.append(Output(clock, STDOUT, f"exiting with code {code}\n".encode()))
            sent = code


def _image_only() -> Run:
    """A container without a command: the image's entrypoint, nothing else."""
    return (yield ImageProcess(()))  # type: ignore[return-value]


def _image_process(pod: Obj, container: Obj, argv: tuple[str, ...], seconds: float) -> tuple[list[bytes], int | None]:
    """What the image's own process writes at its start, and its exit code (None: never exits)."""
    meta = pod.get("metadata") or {}
    name, image = str(container.get("name") or ""), str(container.get("image") or "")
    given = (meta.get("annotations") or {}).get(OUTPUT_PREFIX + name)
    if given is not None:
        lines = [line.encode() + b"\n" for line in str(given).splitlines()]
    else:
        what = " ".join(argv) or "the entrypoint"
        lines = [f"{image}: {what} started in container {name} of pod {meta.get('namespace')}/{meta.get('name')}\n".encode()]
    code = image_exit_code(image)
    if code is None and ((pod.get("spec") or {}).get("restartPolicy") or "Always") != "Always":
        code = 0
    return lines, code
