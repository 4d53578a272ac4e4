"""``pods/exec`` and ``pods/attach`` (kube's ``ExecREST``/``AttachREST`` and the kubelet's
``remotecommand``) over a WebSocket channel protocol (:mod:`.channels`), what ``kubectl exec``,
``kubectl attach``, ``kubectl run -it``, the Python client's ``stream()``, lightkube's and kr8s's
exec speak.

* **exec** runs the ``command`` query values in the container's shell (:mod:`.shell`), in real
  time, with the container's files and environment (:mod:`.files`); its stdin is the client's
  stdin channel, its exit code goes back on the error channel.
* **attach** joins the main process: an interactive shell when the container keeps ``stdin``
  open and runs one (``sh`` as its command or args, or no command in a ``busybox``, ``alpine``,
  ``ubuntu`` or ``debian`` image); else the output the main process writes from now on, until the
  container's instance ends.

With ``tty`` the output is one stream with ``\\r\\n`` line ends, input is echoed and read a line at
a time (backspace, ``^C`` and ``^D`` as a terminal's line discipline), and an interactive shell
prompts ``/ # ``. Both methods are served: a WebSocket upgrade is a GET, which kube 1.35 also
authorizes as ``create`` on the subresource (``AuthorizePodWebsocketUpgradeCreatePermission``),
so exec always needs ``create`` on ``pods/exec``. A request that is no WebSocket upgrade (SPDY's
included) is refused with a 400 once every other check has passed: kubectl, which tries a
WebSocket first, retries a refused one over SPDY and shows that answer, so it is the real reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import posixpath
import time
from dataclasses import dataclass
from typing import Any

from kplane.api import Exchange, GroupVersionKind, Registry, RequestContext, Served, errors
from kplane.plugins.core.containers import channels, files, instances, process
from kplane.plugins.core.containers.channels import STDERR, STDOUT, Channels
from kplane.plugins.core.containers.logs import flag
from kplane.plugins.core.containers.shell import SHELLS, ImageProcess, Read, Run, Shell, Sleep, Write

Obj = dict[str, Any]
#: Images whose own entrypoint is a shell (attach to one with stdin open is a shell session).
SHELL_IMAGES = frozenset({"busybox", "alpine", "ubuntu", "debian", "fedora", "centos"})
#: How often an attach with nothing to write looks whether the pod changed or the client left.
IDLE_CHECK = 1.0
#: The longest line a terminal holds (Linux's ``N_TTY_BUF_SIZE`` less the newline): more is dropped.
MAX_CANON = 4095


@dataclass(frozen=True, slots=True)
class StreamOptions:
    """``PodExecOptions``/``PodAttachOptions`` from the query."""

    container: str
    stdin: bool
    stdout: bool
    stderr: bool
    tty: bool
    command: tuple[str, ...]

    @classmethod
    def of(cls, exchange: Exchange) -> StreamOptions:
        tty = flag(exchange, "tty")
        return cls((exchange.query("container") or [""])[0], flag(exchange, "stdin"), flag(exchange, "stdout"),
                   flag(exchange, "stderr") and not tty, tty, tuple(exchange.query("command")))


class _Streaming(Served):
    """What exec and attach share: the pod, the container, the checks and the upgrade."""

    connect_methods = frozenset({"GET", "POST"})

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    async def _open(self, ctx: RequestContext, name: str, exchange: Exchange,
                    options: StreamOptions) -> tuple[Obj, Obj, str]:
        """The pod, its container and the subprotocol, once every check has passed."""
        if exchange.method == "GET" and ctx.authorize_create is not None:
            await ctx.authorize_create()  # the upgrade's GET must be allowed to create, as kube 1.35's
        pod = await instances.get_pod(self.registry, ctx, name)
        container = instances.pick_container(pod, options.container)
        if not (pod.get("spec") or {}).get("nodeName"):
            raise errors.bad_request(f"pod {name} does not have a host assigned")
        if not (options.stdin or options.stdout or options.stderr):
            raise errors.bad_request("you must specify at least 1 of stdin, stdout, stderr")
        state = (instances.container_status(pod, container["name"]) or {}).get("state") or {}
        if "running" not in state:
            raise errors.bad_request(f'container not found ("{container["name"]}")')
        # Last: kubectl retries a refused WebSocket over SPDY, whose answer is then the one it shows.
        offered = exchange.websocket_protocols()
        if offered is None:
            upgrade = exchange.header("Upgrade") or ""
            if upgrade.lower().startswith("spdy"):
                raise errors.bad_request(f"unable to upgrade connection: {upgrade} is not served; use a WebSocket "
                                         f"({channels.V5})")
            raise errors.bad_request("Upgrade request required")
        protocol = channels.choose(offered)
        if protocol is None:
            raise errors.bad_request(channels.unsupported(offered))
        return pod, container, protocol

    async def _session(self, exchange: Exchange, protocol: str, options: StreamOptions) -> Channels:
        io = Channels(await exchange.websocket(protocol or None), protocol)
        io.start()
        first = STDOUT if options.stdout else STDERR if options.stderr else channels.ERROR
        await io.send(first, b"")
        return io


class PodExecREST(_Streaming):
    """``pods/exec``: a command run in the container's shell."""

    kind = GroupVersionKind("", "v1", "PodExecOptions")  # discovery's, as kube-apiserver's

    async def connect(self, ctx: RequestContext, name: str, exchange: Exchange) -> None:
        options = StreamOptions.of(exchange)
        if not options.command:
            raise errors.bad_request("you must specify at least one command for the container")
        pod, container, protocol = await self._open(ctx, name, exchange, options)
        sources = await files.load_sources(self.registry, ctx, pod, tokens=True)
        view = process.context(pod, container, sources, image_process=False)
        view.cwd = posixpath.normpath("/" + str(container.get("workingDir") or "").lstrip("/"))
        view.tty = options.tty
        io = await self._session(exchange, protocol, options)
        try:
            code = await drive(Shell(view).run_argv(list(options.command)), io, options)
            if code is not None:
                await io.finish(code, f"command terminated with exit code {code}")
        finally:
            await io.stop()


class PodAttachREST(_Streaming):
    """``pods/attach``: the main process's streams."""

    kind = GroupVersionKind("", "v1", "PodAttachOptions")

    async def connect(self, ctx: RequestContext, name: str, exchange: Exchange) -> None:
        options = StreamOptions.of(exchange)
        pod, container, protocol = await self._open(ctx, name, exchange, options)
        sources = await files.load_sources(self.registry, ctx, pod, tokens=True)
        view = process.context(pod, container, sources, image_process=False)
        view.tty = options.tty
        io = await self._session(exchange, protocol, options)
        try:
            if container.get("stdin") and _runs_a_shell(container, view.env):
                run = instances.instance(pod, container["name"], previous=False)
                code = await drive(Shell(view).run_argv(["sh"]), io, options)
                if code is not None:  # the main process ended: so does the container, whose status tells the code
                    await instances.end_instance(self.registry, ctx, name, container["name"], run, code)
                    await io.finish(0)
            elif await self._watch_output(ctx, pod, container, sources, io, options):
                await io.finish(0)
        finally:
            await io.stop()

    async def _watch_output(self, ctx: RequestContext, pod: Obj, container: Obj, sources: files.Sources, io: Channels,
                            options: StreamOptions) -> bool:
        """Send what the main process writes from now on until its instance ends (True) or the
        client leaves (False)."""
        run = instances.instance(pod, container["name"], previous=False)
        now = time.time()
        ahead = [line for line in instances.output(pod, container, sources, run) if line.at > now]
        changes = instances.pod_changes(self.registry, ctx, pod)
        waiting: asyncio.Task[Obj | None] | None = None
        try:
            while True:
                due = ahead[0].at - time.time() if ahead else None
                if due is not None and due <= 0:
                    line = ahead.pop(0)
                    await _send(io, options, line.stream, line.data)
                    continue
                changed, now_pod, waiting = await instances.next_change(
                    changes, waiting, IDLE_CHECK if due is None else min(due, IDLE_CHECK))
                if io.closed.is_set():
                    return False
                if changed:
                    current = instances.same_instance(now_pod, container["name"], run) if now_pod is not None else None
                    if current is None or current.finished is not None:
                        return True
        finally:
            if waiting is not None:
                waiting.cancel()
            with contextlib.suppress(Exception):
                await changes.aclose()  # type: ignore[attr-defined]


def _runs_a_shell(container: Obj, env: dict[str, str]) -> bool:
    argv = process.command_of(container, env)
    if argv is None:
        image = str(container.get("image") or "").rpartition("/")[2].partition(":")[0].partition("@")[0]
        return image in SHELL_IMAGES
    return argv[0] in SHELLS and len(argv) == 1 or argv[0] in SHELLS and argv[1:] in (["-i"], ["-l"], ["-il"])


async def _send(io: Channels, options: StreamOptions, stream: int, data: bytes) -> None:
    if options.tty:
        await io.send(STDOUT, data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    elif (stream == STDOUT and options.stdout) or (stream == STDERR and options.stderr):
        await io.send(stream, data)


async def drive(run: Run, io: Channels, options: StreamOptions) -> int | None:
    """Run the shell in real time over ``io``: its exit code, None when the client left first."""
    terminal = Terminal(io, options) if options.tty else None
    sent: bytes | int | None = None
    while True:
        try:
            event = run.send(sent)
        except StopIteration as done:
            return int(done.value)
        sent = None
        try:
            if isinstance(event, Write):
                await _send(io, options, event.stream, event.data)
            elif isinstance(event, Sleep):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(io.closed.wait(), event.seconds)
                    return None  # the client left while it slept
            elif isinstance(event, Read):
                if options.stdin:
                    sent = await terminal.read_line() if terminal is not None else await io.stdin.get()
            elif isinstance(event, ImageProcess):  # never in exec: unknown programs are not found
                sent = 127
        except ConnectionResetError:
            return None


class Terminal:
    """A terminal's line discipline over the stdin channel: echo, a line at a time (of at most
    :data:`MAX_CANON` bytes, as Linux's), backspace, ``^C`` (the line is dropped) and ``^D`` on an
    empty line (the end of input)."""

    def __init__(self, io: Channels, options: StreamOptions) -> None:
        self.io = io
        self.options = options
        self.pending = b""  # typed, not yet read
        self.line = bytearray()

    async def read_line(self) -> bytes | None:
        while True:
            while self.pending:
                byte, self.pending = self.pending[:1], self.pending[1:]
                if byte in (b"\r", b"\n"):
                    await self.io.send(STDOUT, b"\r\n")
                    line, self.line = bytes(self.line) + b"\n", bytearray()
                    return line
                if byte == b"\x04":
                    if not self.line:
                        return None
                elif byte == b"\x03":
                    self.line.clear()
                    await self.io.send(STDOUT, b"^C\r\n")
                    return b"\n"
                elif byte in (b"\x7f", b"\x08"):
                    if self.line:
                        del self.line[-1]
                        await self.io.send(STDOUT, b"\b \b")
                elif len(self.line) < MAX_CANON:
                    self.line += byte
                    await self.io.send(STDOUT, byte)
            chunk = await self.io.stdin.get()
            if chunk is None:
                return bytes(self.line) or None
            self.pending = chunk
