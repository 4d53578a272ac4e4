"""Run a Markdown guide the way its reader would: write its files, type its commands.

The conventions (``docs/writing-a-plugin.md`` follows them; ``tests/test_docs.py`` runs it):

* A code block whose first line is ``# file: PATH`` is the whole of that file (the marker line
  itself is not written). A later block for the same path replaces it.
* ``# file: PATH (update)`` on a Python block shows only what changes: its imports join the
  file's imports (names merged into an existing ``from X import ...``), and each top-level
  function, class or assignment replaces the one of the same name, or is added at the end.
* A ``console`` block is a terminal session: lines starting with ``$ `` are commands, run with
  bash in the reader's folder (``cd`` and ``export`` carry over to the next command); the lines
  after a command are its expected output (stdout and stderr together). Outputs are compared
  with runs of blanks collapsed, blank lines dropped and ages (``5s``, ``3m2s``) equal to each
  other; ``[...]`` stands for any text, and on a line of its own for any lines. A command
  without expected output must succeed; one with expected output may fail (errors are output).
* ``kplane serve`` runs in the background (the reader's "second terminal") on a port chosen
  for the test, reported as 6443; running it again restarts it, as Ctrl-C and a new
  ``kplane serve`` would. ``pip install`` gets ``--no-build-isolation --no-deps``, so nothing
  is downloaded, and installs into a virtual environment of the session's own
  (``tests/isolated.py``): ``python``, ``pip``, ``kplane`` and ``pytest`` are that one's.
* Every block is one of these; anything else is an error, so no block goes untested.

``python -m tests.docblocks GUIDE FOLDER`` writes the files a guide assembles into FOLDER (how
``examples/widgets`` is kept equal to the guide).
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
import tomllib
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from tests.isolated import Venv
from tests.servers import probe_context

FENCE = re.compile(r"^```(\S*)\s*$")
FILE_MARKER = re.compile(r"^# file: (\S+)( \(update\))?\s*$")
AGE = re.compile(r"(?<!\S)\d+[smhdy](?:\d+[smh])?(?!\S)")
ELLIPSIS = "[...]"
SHOWN_PORT = 6443
FILE_LANGUAGES = {"python", "toml", "yaml"}


@dataclass(slots=True)
class Block:
    language: str
    text: str
    line: int  # of the opening fence, 1-based


@dataclass(slots=True)
class FileBlock:
    path: str
    text: str
    update: bool
    line: int


@dataclass(slots=True)
class Command:
    command: str
    expected: list[str]
    line: int


def blocks(markdown: str) -> list[Block]:
    """The fenced code blocks of a Markdown text, in order."""
    found: list[Block] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].rstrip() == "```"), None)
        if end is None:
            raise ValueError(f"line {i + 1}: code block never closed")
        found.append(Block(opening.group(1), "\n".join(lines[i + 1:end]) + "\n", i + 1))
        i = end + 1
    return found


def steps(markdown: str) -> list[FileBlock | list[Command]]:
    """Each block as what the reader does with it: write a file, or run commands."""
    out: list[FileBlock | list[Command]] = []
    for block in blocks(markdown):
        if block.language == "console":
            out.append(commands(block))
            continue
        first, _, rest = block.text.partition("\n")
        marker = FILE_MARKER.match(first)
        if block.language not in FILE_LANGUAGES or marker is None:
            raise ValueError(f"line {block.line}: a {block.language or 'plain'} block that is neither a "
                             "'console' session nor starts with '# file: PATH': it would go untested")
        update = marker.group(2) is not None
        if update and block.language != "python":
            raise ValueError(f"line {block.line}: only Python files can be updated in part")
        out.append(FileBlock(marker.group(1), rest, update, block.line))
    return out


def commands(block: Block) -> list[Command]:
    found: list[Command] = []
    lines = block.text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("$ "):
            if not found:
                raise ValueError(f"line {block.line + 1 + i}: console output before any command")
            found[-1].expected.append(line)
            i += 1
            continue
        command, start = line[2:], i
        while command.endswith("\\") and i + 1 < len(lines):
            i += 1
            command = command[:-1] + "\n" + lines[i]
        found.append(Command(command, [], block.line + 1 + start))
        i += 1
    return found


# -- files ------------------------------------------------------------------------------------

def assemble(markdown: str) -> dict[str, str]:
    """The files the guide's blocks leave behind, by relative path."""
    files: dict[str, str] = {}
    for step in steps(markdown):
        if isinstance(step, FileBlock):
            files[step.path] = write(files, step)
    return files


def write(files: dict[str, str], block: FileBlock) -> str:
    """The text of ``block.path`` after ``block``, given the files written so far."""
    if not block.update:
        return block.text
    if block.path not in files:
        raise ValueError(f"line {block.line}: {block.path} is updated before it is written")
    packages = {Path(path).parts[0] for path in files if Path(path).name == "__init__.py"}
    return update_python(files[block.path], block.text, packages)


def _segments(source: str) -> tuple[list[ast.stmt], list[tuple[str | None, int, int]]]:
    """Top-level imports, and every other top-level statement as (name, first line, last line),
    0-based, including its decorators and the comment lines right above it."""
    tree = ast.parse(source)
    lines = source.splitlines()
    imports: list[ast.stmt] = []
    others: list[tuple[str | None, int, int]] = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(node)
            continue
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        while start > 0 and lines[start - 1].startswith("#"):
            start -= 1
        others.append((_name(node), start, node.end_lineno - 1))  # type: ignore[operator]
    return imports, others


def _name(node: ast.stmt) -> str | None:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def update_python(current: str, change: str, packages: set[str] = frozenset()) -> str:  # type: ignore[assignment]
    """``current`` with the imports and top-level definitions of ``change`` merged in;
    ``packages`` are the project's own (their imports are grouped last)."""
    lines = current.splitlines()
    imports, others = _segments(current)
    new_imports, new_others = _segments(change)
    change_lines = change.splitlines()
    # Definitions: replace those named alike (from the bottom, so line numbers hold), append the rest.
    by_name = {name: (start, end) for name, start, end in others if name}
    appended: list[str] = []
    replacements: list[tuple[int, int, list[str]]] = []
    for name, start, end in new_others:
        text = change_lines[start:end + 1]
        if name in by_name:
            replacements.append((*by_name[name], text))
        else:
            appended += ["", "", *text]
    for start, end, text in sorted(replacements, reverse=True):
        lines[start:end + 1] = text
    lines += appended
    # Imports: merged, then written back as one block in place of the old one.
    if new_imports:
        if not imports:
            raise ValueError("an update adds imports to a file that has none")
        first, last = imports[0].lineno - 1, imports[-1].end_lineno - 1  # type: ignore[operator]
        lines[first:last + 1] = import_block(imports + new_imports, packages)
    return "\n".join(lines).rstrip("\n") + "\n"


def import_block(statements: list[ast.stmt], packages: set[str]) -> list[str]:
    """Import statements merged and grouped as isort does: __future__, standard library, third
    party, then the project's own ``packages``, blank-separated."""
    plain: set[str] = set()
    froms: dict[str, set[str]] = {}
    for node in statements:
        if isinstance(node, ast.Import):
            plain.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            froms.setdefault("." * node.level + (node.module or ""), set()).update(a.name for a in node.names)

    def section(module: str) -> int:
        top = module.split(".")[0]
        if top == "__future__":
            return 0
        if top in sys.stdlib_module_names:
            return 1
        return 3 if top in packages or top == "" else 2

    sections: dict[int, list[str]] = {}
    for module in sorted(plain):
        sections.setdefault(section(module), []).append(f"import {module}")
    for module in sorted(froms):
        names = ", ".join(sorted(froms[module], key=lambda n: (not n.isupper(), not n[:1].isupper(), n)))
        sections.setdefault(section(module), []).append(f"from {module} import {names}")
    out: list[str] = []
    for key in sorted(sections):
        out += ([""] if out else []) + sections[key]
    return out


# -- the terminal -----------------------------------------------------------------------------

def normalize(text: str) -> str:
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "".join(AGE.sub("<age>", line) + "\n" for line in lines if line)


def matches(expected: list[str], actual: str) -> bool:
    pattern = []
    for line in normalize("\n".join(expected)).splitlines():
        if line == ELLIPSIS:
            pattern.append(r"(?:[^\n]*\n)*?")
        else:
            pattern.append(".*?".join(re.escape(part) for part in line.split(ELLIPSIS)) + r"\n")
    return re.fullmatch("".join(pattern), normalize(actual), re.DOTALL) is not None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Session:
    """The reader's terminal: a folder, an environment, and a ``kplane serve`` in the background."""

    folder: Path
    source: str = "the guide"
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    port: int = field(default_factory=free_port)
    installed: list[str] = field(default_factory=list)  # distributions `pip install` installed, to undo
    server: subprocess.Popen[str] | None = None
    server_output: list[str] = field(default_factory=list)
    transcript: list[str] = field(default_factory=list)
    strict: bool = True  # False: collect differing outputs in ``mismatches`` and go on
    mismatches: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cwd = self.folder
        self.state = self.folder / ".session"
        self.state.mkdir(parents=True, exist_ok=True)
        home = self.state / "home"
        home.mkdir(exist_ok=True)
        self.venv = Venv.create(self.state / "venv")
        self.env = self.venv.env(self.env)
        self.env["HOME"] = str(home)
        for name in ("KUBECONFIG", "PYTEST_ADDOPTS", "PYTEST_CURRENT_TEST"):
            self.env.pop(name, None)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"  # kplane serve's default

    def follow(self, markdown: str) -> None:
        """Do every step of the guide, in order."""
        files: dict[str, str] = {}
        for step in steps(markdown):
            if isinstance(step, FileBlock):
                files[step.path] = write(files, step)
                target = self.cwd / step.path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(files[step.path])
            else:
                for command in step:
                    self.run(command)

    def run(self, command: Command) -> str:
        if command.command.startswith("kplane serve"):
            output = self.serve(command.command)
        else:
            output = self.shell(command)
        self.transcript.append(f"$ {command.command}\n{output}")
        if command.expected and not matches(command.expected, output):
            message = (f"{self.source} line {command.line}: $ {command.command}\n"
                       "--- expected\n" + "\n".join(command.expected) + f"\n--- got\n{output}")
            if self.strict:
                raise AssertionError(message)
            self.mismatches.append(message)
        return output

    def shell(self, command: Command) -> str:
        text = command.command
        if re.match(r"pip3? install ", text):
            for arg in shlex.split(text)[2:]:
                pyproject = self.cwd / arg / "pyproject.toml"
                if not arg.startswith("-") and pyproject.exists():
                    self.installed.append(tomllib.loads(pyproject.read_text())["project"]["name"])
            text = re.sub(r"^pip3? install ", "pip install --no-build-isolation --no-deps ", text)
        script = f'{text}\n__status=$?\npwd > "{self.state}/cwd"\nenv -0 > "{self.state}/env"\nexit $__status\n'
        done = subprocess.run(["bash", "-c", script], check=False, cwd=self.cwd, env=self.env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=300)
        if (self.state / "cwd").exists():
            self.cwd = Path((self.state / "cwd").read_text().strip())
            pairs = (item.split("=", 1) for item in (self.state / "env").read_text().split("\0") if "=" in item)
            self.env = {k: v for k, v in pairs if k not in ("_", "SHLVL", "__status")}
        if done.returncode != 0 and not command.expected:
            raise AssertionError(f"{self.source} line {command.line}: $ {command.command}\n"
                                 f"exited with {done.returncode}:\n{done.stdout}")
        return done.stdout

    def serve(self, text: str) -> str:
        self.stop()
        args = shlex.split(text)
        if "--port" not in args:
            args += ["--port", str(self.port)]
        log = (self.state / "server.log").open("a")
        self.server = subprocess.Popen(args, cwd=self.cwd, env=self.env, stdout=subprocess.PIPE, stderr=log, text=True)
        log.close()
        lines: list[str] = []

        def read(stdout: IO[str]) -> None:
            for line in stdout:
                lines.append(line)  # noqa: PERF402  (one at a time, as the server prints them)

        threading.Thread(target=read, args=(self.server.stdout,), daemon=True).start()
        deadline = time.monotonic() + 30
        while True:
            if self.server.poll() is not None:
                raise AssertionError(f"kplane serve exited with {self.server.returncode}:\n{self.server_log()}")
            try:
                with urllib.request.urlopen(f"{self.url}/readyz", timeout=1, context=probe_context()) as reply:
                    if reply.status == 200 and len(lines) >= 3:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"kplane serve was not ready within 30s:\n{self.server_log()}")
            time.sleep(0.05)
        return "".join(lines[:3]).replace(f":{self.port}", f":{SHOWN_PORT}")

    def server_log(self) -> str:
        path = self.state / "server.log"
        return path.read_text()[-5000:] if path.exists() else ""

    def stop(self) -> None:
        """Ctrl-C in the server's terminal."""
        if self.server is None:
            return
        self.server.send_signal(signal.SIGINT)
        try:
            self.server.wait(30)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait()
        self.server = None

    def close(self) -> None:
        """Stop the server and uninstall what the guide installed."""
        self.stop()
        if self.installed:
            self.venv.pip("uninstall", "-y", *self.installed)
            self.installed.clear()


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m tests.docblocks GUIDE.md FOLDER", file=sys.stderr)
        return 2
    guide, folder = Path(argv[0]), Path(argv[1])
    for path, text in assemble(guide.read_text()).items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
