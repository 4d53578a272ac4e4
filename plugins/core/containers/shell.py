"""The small shell of a simulated container: what ``kubectl exec``, a container's ``command``
and ``args``, and ``sh -c`` scripts run. Nothing here ever runs on the host: every program is a
builtin of this module, reading the container's own files (:mod:`.files`).

The language is a small part of POSIX sh: words with ``'...'``, ``"..."`` and ``\\`` quoting;
``$NAME``, ``${NAME}``, ``$?``, ``$#``, ``$0``-``$9``, ``$@`` expansion; ``NAME=value``
assignments; ``;``, newlines, ``&&``, ``||``; ``while``/``until`` ... ``do`` ... ``done``,
``for NAME in ...; do ...; done``, ``if ... then ... elif ... else ... fi``; redirections
``>file``, ``>>file``, ``<file``, ``>&2``, ``2>&1``, ``>/dev/null`` (files are written in memory,
for this shell only); ``#`` comments. Pipes, subshells and command substitution are refused with
a message (exit 2).

The programs: ``echo`` (``-n``, ``-e``), ``printf`` (``%s``, ``%d``, ``\\n``), ``cat``, ``env``,
``printenv``, ``hostname``, ``sh``/``bash``/``ash`` (``-c SCRIPT [NAME ARGS...]``, a script
file, or commands read from stdin), ``exit [N]``, ``true``, ``false``, ``:``, ``sleep N``
(``s``/``m``/``h``/``d`` suffixes, ``infinity``), ``ls`` (``-a``, ``-l``, ``-1``), ``pwd``,
``cd``, ``export``, ``unset``, ``test``/``[`` (``-e -f -d -n -z = != -eq -ne -lt -le -gt -ge !``),
``whoami``, ``id``, ``uname``, ``date``. Another program is "not found" (exit 127), unless the
shell runs a container's main process: then it is the image's own process (:mod:`.process`).

A run is a generator of :class:`Event` (written output, a sleep, a read of stdin, the image's
process) that returns the exit code, so the same script can run in virtual time (a container's
log) or in real time (an exec session). It runs in the API server's event loop, so it is bounded,
together with the shells it starts: at most :data:`MAX_STEPS` steps (a command, a round of a
loop, :data:`STEP_BYTES` of data expanded or written, a look through :data:`STEP_FILES` files;
past them it looks like a loop that never ends), :data:`MAX_MEMORY` bytes in its variables and in
any word or argument list it expands, :data:`MAX_WRITTEN` bytes in the files it writes (past
these, ``out of memory`` or the like on stderr and exit code 2); a script of more than
:data:`MAX_SCRIPT` bytes, or nested (compound commands and ``sh`` calls together) deeper than
:data:`MAX_DEPTH`, is refused.
"""

from __future__ import annotations

import math
import posixpath
import shlex
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

#: The most steps one run carries out; past them it stops as if it ran on without output.
MAX_STEPS = 10_000
#: The bytes of data (expanded or written) that count as one step, and the files looked through.
STEP_BYTES = 4096
STEP_FILES = 256
#: The most bytes a shell's variables may hold, and the longest word or argument list it may build.
MAX_MEMORY = 1 << 20
#: The longest script (bytes) and the deepest nesting (of compound commands and ``sh`` calls).
MAX_SCRIPT = 64 * 1024
MAX_DEPTH = 32
#: The most bytes the in-memory files written by one shell may hold together (names included).
MAX_WRITTEN = 1 << 20

STDOUT, STDERR = 1, 2
SHELLS = frozenset({"sh", "bash", "ash", "dash", "/bin/sh", "/bin/bash", "/bin/ash", "/bin/dash", "/usr/bin/bash",
                    "/usr/bin/sh"})
_KEYWORDS = frozenset({"while", "until", "do", "done", "for", "in", "if", "then", "elif", "else", "fi"})


@dataclass(frozen=True, slots=True)
class Write:
    """Bytes written to stdout (1) or stderr (2)."""

    stream: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Sleep:
    """Time passes: ``seconds``, or forever (None)."""

    seconds: float | None


@dataclass(frozen=True, slots=True)
class Read:
    """The program reads stdin: the driver sends the next chunk, or None at its end."""


@dataclass(frozen=True, slots=True)
class ImageProcess:
    """The image's own process runs (a program the shell does not know, in a main process): the
    driver sends its exit code, or never resumes the run when it runs forever."""

    argv: tuple[str, ...]


Event = Write | Sleep | Read | ImageProcess
#: What a run yields and is sent: a chunk of stdin for a Read, an exit code for an ImageProcess.
Run = Generator[Event, "bytes | int | None", int]


class ShellError(Exception):
    """A script this shell cannot run (a syntax error, or what it does not support)."""


class _Exit(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


class _OutOfSteps(Exception):
    pass


@dataclass(slots=True)
class _Budget:
    """What a shell shares with the shells it starts, so that every bound holds across ``sh``."""

    steps: int = 0
    depth: int = 0
    held: int = 0  # bytes of the values the shells assigned
    written: int = 0  # bytes of the files they wrote
    owned: set[str] = field(default_factory=set)  # the files they made or truncated


@dataclass(slots=True)
class Context:
    """What a shell sees of its container: environment, files (absolute path -> bytes; a
    directory is any prefix of a path, or a path ending in ``/``), host name, working directory,
    and whether unknown programs are the image's process (a main process) or not found (exec)."""

    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    hostname: str = "localhost"
    cwd: str = "/"
    image_process: bool = False
    tty: bool = False  # an interactive shell prompts
    now: Callable[[], float] = lambda: datetime.now(UTC).timestamp()


# -- words and tokens -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Part:
    """A piece of a word: literal text, or a parameter to expand (``var``), quoted or not."""

    text: str
    var: bool = False
    quoted: bool = False


Word = tuple[Part, ...]


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # "word", "op" (; && || | & newline), "redir" (> >> < >& <&), "io" (the fd of a redirection)
    value: str = ""
    word: Word = ()


def _plain(word: Word) -> str | None:
    """The word's text when it is all unquoted literal (a keyword or an assignment's name)."""
    if all(not p.var and not p.quoted for p in word):
        return "".join(p.text for p in word)
    return None


def tokenize(text: str) -> list[Token]:
    if len(text.encode()) > MAX_SCRIPT:
        raise ShellError(f"the script is longer than {MAX_SCRIPT} bytes")
    tokens: list[Token] = []
    parts: list[Part] = []
    literal: list[str] = []
    started = False
    i, n = 0, len(text)

    def flush_literal(quoted: bool = False) -> None:
        if literal:
            parts.append(Part("".join(literal), quoted=quoted))
            literal.clear()

    def end_word() -> None:
        nonlocal started
        flush_literal()
        if started:
            tokens.append(Token("word", word=tuple(parts)))
        parts.clear()
        started = False

    def parameter(j: int, quoted: bool) -> int:
        """Read the parameter after ``$`` at ``j`` into parts; the index after it."""
        if j < n and text[j] == "{":
            close = text.find("}", j)
            if close < 0:
                raise ShellError("syntax error: missing '}'")
            name = text[j + 1:close]
            if not (name.isidentifier() or name in ("?", "#", "@", "*", "$") or name.isdigit()):
                raise ShellError(f"${{{name}}}: bad substitution")
            parts.append(Part(name, var=True, quoted=quoted))
            return close + 1
        if j < n and text[j] == "(":
            raise ShellError("command substitution $(...) is not supported by this shell")
        if j < n and (text[j] in "?#@*$" or text[j].isdigit()):
            parts.append(Part(text[j], var=True, quoted=quoted))
            return j + 1
        k = j
        while k < n and (text[k].isalnum() or text[k] == "_"):
            k += 1
        if k == j or text[j].isdigit():
            literal.append("$")
            return j
        parts.append(Part(text[j:k], var=True, quoted=quoted))
        return k

    while i < n:
        c = text[i]
        if c in " \t":
            end_word()
            i += 1
        elif c == "\n":
            end_word()
            tokens.append(Token("op", "\n"))
            i += 1
        elif c == "#" and not started:
            while i < n and text[i] != "\n":
                i += 1
        elif c == "\\":
            started = True
            if i + 1 < n and text[i + 1] == "\n":
                i += 2
                continue
            literal.append(text[i + 1] if i + 1 < n else "\\")
            i += 2
        elif c == "'":
            started = True
            flush_literal()
            close = text.find("'", i + 1)
            if close < 0:
                raise ShellError("syntax error: unterminated quoted string")
            parts.append(Part(text[i + 1:close], quoted=True))
            i = close + 1
        elif c == '"':
            started = True
            flush_literal()
            i += 1
            while True:
                if i >= n:
                    raise ShellError("syntax error: unterminated quoted string")
                d = text[i]
                if d == '"':
                    flush_literal(quoted=True)
                    parts.append(Part("", quoted=True))  # "" is a word, even empty
                    i += 1
                    break
                if d == "\\" and i + 1 < n and text[i + 1] in '$`"\\\n':
                    if text[i + 1] != "\n":
                        literal.append(text[i + 1])
                    i += 2
                elif d == "$":
                    flush_literal(quoted=True)
                    i = parameter(i + 1, True)
                elif d == "`":
                    raise ShellError("command substitution `...` is not supported by this shell")
                else:
                    literal.append(d)
                    i += 1
        elif c == "$":
            started = True
            flush_literal()
            i = parameter(i + 1, False)
        elif c == "`":
            raise ShellError("command substitution `...` is not supported by this shell")
        elif c in ";&|":
            end_word()
            two = text[i:i + 2]
            if two in ("&&", "||"):
                tokens.append(Token("op", two))
                i += 2
            elif two == ";;":
                raise ShellError("syntax error: unexpected ';;'")
            else:
                tokens.append(Token("op", c))
                i += 1
        elif c in "<>":
            word_text = _plain(tuple(parts)) if not literal else "".join(literal) if not parts else None
            if started and word_text is not None and word_text.isdigit() and len(word_text) == 1:
                literal.clear()
                parts.clear()
                started = False
                tokens.append(Token("io", word_text))
            else:
                end_word()
            for op in (">>", ">&", "<&", ">", "<"):
                if text.startswith(op, i):
                    tokens.append(Token("redir", op))
                    i += len(op)
                    break
        elif c in "()":
            raise ShellError("subshells ( ... ) are not supported by this shell")
        else:
            started = True
            literal.append(c)
            i += 1
    end_word()
    return tokens


# -- the syntax tree -------------------------------------------------------------------------------
@dataclass(slots=True)
class Redirect:
    fd: int
    op: str
    target: Word


@dataclass(slots=True)
class Simple:
    assigns: list[tuple[str, Word]]
    words: list[Word]
    redirects: list[Redirect]


@dataclass(slots=True)
class AndOr:
    first: Node
    rest: list[tuple[str, Node]]


@dataclass(slots=True)
class Sequence:
    items: list[Node]


@dataclass(slots=True)
class Loop:
    cond: Node
    body: Node
    until: bool


@dataclass(slots=True)
class For:
    name: str
    words: list[Word] | None  # None: "$@"
    body: Node


@dataclass(slots=True)
class If:
    branches: list[tuple[Node, Node]]
    otherwise: Node | None


Node = Simple | AndOr | Sequence | Loop | For | If


def _unexpected(token: Token | None, expecting: str = "") -> ShellError:
    """A syntax error as busybox's ash words it: what was found, and what was expected."""
    if token is None or token.value == "\n":
        what = "end of file" if token is None else "newline"
    else:
        what = '"' + (token.value or "".join(p.text for p in token.word)) + '"'
    return ShellError(f"syntax error: unexpected {what}" + (f' (expecting "{expecting}")' if expecting else ""))


class _Parser:
    def __init__(self, tokens: list[Token], depth: int) -> None:
        self.tokens = tokens
        self.at = 0
        self.depth = depth

    def peek(self) -> Token | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def keyword(self) -> str | None:
        token = self.peek()
        if token is not None and token.kind == "word":
            text = _plain(token.word)
            if text in _KEYWORDS:
                return text
        return None

    def expect(self, keyword: str) -> None:
        self.skip_newlines()
        if self.keyword() != keyword:
            raise _unexpected(self.peek(), keyword)
        self.at += 1

    def skip_newlines(self) -> None:
        while (token := self.peek()) is not None and token.kind == "op" and token.value in ("\n", ";"):
            self.at += 1

    def program(self) -> Node:
        node = self.sequence(())
        if self.peek() is not None:
            raise _unexpected(self.peek())
        return node

    def sequence(self, ends: tuple[str, ...]) -> Node:
        """A compound list up to one of ``ends``; only the whole script's may be empty (POSIX)."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ShellError(f"the script nests deeper than {MAX_DEPTH}")
        items: list[Node] = []
        while True:
            self.skip_newlines()
            token = self.peek()
            if token is None or (self.keyword() in ends):
                break
            items.append(self.and_or())
            token = self.peek()
            if token is not None and token.kind == "op" and token.value in (";", "\n", "&"):
                self.at += 1
            elif token is not None and self.keyword() not in ends:
                raise _unexpected(token)
        if ends and not items:
            raise _unexpected(self.peek())
        self.depth -= 1
        return Sequence(items)

    def and_or(self) -> Node:
        first = self.command()
        rest: list[tuple[str, Node]] = []
        while (token := self.peek()) is not None and token.kind == "op" and token.value in ("&&", "||"):
            self.at += 1
            self.skip_newlines()
            rest.append((token.value, self.command()))
        if (token := self.peek()) is not None and token.kind == "op" and token.value == "|":
            raise ShellError("pipes are not supported by this shell")
        return AndOr(first, rest) if rest else first

    def command(self) -> Node:
        keyword = self.keyword()
        if keyword in ("while", "until"):
            self.at += 1
            cond = self.sequence(("do",))
            self.expect("do")
            body = self.sequence(("done",))
            self.expect("done")
            return Loop(cond, body, keyword == "until")
        if keyword == "for":
            self.at += 1
            token = self.peek()
            name = _plain(token.word) if token is not None and token.kind == "word" else None
            if name is None or not name.isidentifier():
                raise ShellError("syntax error: bad for loop variable")
            self.at += 1
            words: list[Word] | None = None
            if self.keyword() == "in":
                self.at += 1
                words = []
                while (token := self.peek()) is not None and token.kind == "word" and self.keyword() != "do":
                    words.append(token.word)
                    self.at += 1
            self.expect("do")
            body = self.sequence(("done",))
            self.expect("done")
            return For(name, words, body)
        if keyword == "if":
            self.at += 1
            branches: list[tuple[Node, Node]] = []
            otherwise: Node | None = None
            while True:
                cond = self.sequence(("then",))
                self.expect("then")
                branches.append((cond, self.sequence(("elif", "else", "fi"))))
                if self.keyword() == "elif":
                    self.at += 1
                    continue
                if self.keyword() == "else":
                    self.at += 1
                    otherwise = self.sequence(("fi",))
                self.expect("fi")
                return If(branches, otherwise)
        if keyword is not None:
            raise _unexpected(self.peek())
        return self.simple()

    def simple(self) -> Simple:
        assigns: list[tuple[str, Word]] = []
        words: list[Word] = []
        redirects: list[Redirect] = []
        while (token := self.peek()) is not None and token.kind in ("word", "io", "redir"):
            if token.kind == "word":
                self.at += 1
                head = token.word[0] if token.word else None
                if not words and head is not None and not head.var and not head.quoted and "=" in head.text:
                    name, _, value = head.text.partition("=")
                    if name.isidentifier():
                        assigns.append((name, (Part(value), *token.word[1:]) if value else token.word[1:]))
                        continue
                words.append(token.word)
                continue
            fd = -1
            if token.kind == "io":
                fd = int(token.value)
                self.at += 1
                token = self.peek()
                if token is None or token.kind != "redir":
                    raise ShellError("syntax error: bad redirection")
            self.at += 1
            target = self.peek()
            if target is None or target.kind != "word":
                raise ShellError("syntax error: unexpected end of redirection")
            self.at += 1
            if fd < 0:
                fd = 0 if token.value.startswith("<") else 1
            redirects.append(Redirect(fd, token.value, target.word))
        if not (assigns or words or redirects):
            raise _unexpected(self.peek())
        return Simple(assigns, words, redirects)


def parse(text: str, depth: int = 0) -> Node:
    """The tree of ``text``, run by a shell ``depth`` shells deep (nesting counts them too)."""
    return _Parser(tokenize(text), depth).program()


# -- running ----------------------------------------------------------------------------------------
#: Where a command's stdout and stderr go: a stream number, a file path, or None (discarded).
Target = int | str | None


class Shell:
    """One shell process: its variables, positional parameters and last exit code. A shell it
    starts shares its budget (steps, nesting, memory, written files)."""

    def __init__(self, context: Context, *, name: str = "sh", args: tuple[str, ...] = (),
                 budget: _Budget | None = None) -> None:
        self.context = context
        self.vars: dict[str, str] = dict(context.env)  # given, not made: the strings are shared, not counted
        self.exported: set[str] = set(context.env)
        self.name = name
        self.args = list(args)
        self.status = 0
        self.budget = budget if budget is not None else _Budget()
        self.held: dict[str, int] = {}  # the bytes each variable this shell assigned counts in the budget

    # -- entry points -------------------------------------------------------------------------
    def run_argv(self, argv: list[str]) -> Run:
        """Run a program as a container's command (or an exec's): no shell parsing of ``argv``."""
        return (yield from self._guarded(self._program(argv, {STDOUT: STDOUT, STDERR: STDERR}, None)))

    def run_script(self, script: str) -> Run:
        """Run ``script`` as ``sh -c`` does."""
        return (yield from self._guarded(self._script(script)))

    def _script(self, script: str) -> Run:
        tree = parse(script, self.budget.depth)
        return (yield from self._node(tree, {STDOUT: STDOUT, STDERR: STDERR}))

    def _guarded(self, run: Run) -> Run:
        """``run`` with what ends a shell turned into its exit: ``exit``, the end of its steps (it
        looks like a loop that never ends), or an error (its message on stderr, exit code 2)."""
        try:
            return (yield from run)
        except _Exit as stop:
            return stop.code
        except _OutOfSteps:
            yield Sleep(None)
            return 0
        except (ShellError, RecursionError) as err:
            why = err if isinstance(err, ShellError) else "the script nests too deeply"
            yield Write(STDERR, f"{self.name}: {why}\n".encode())
            return 2

    # -- the budget -------------------------------------------------------------------------------
    def _step(self, count: int = 1) -> None:
        self.budget.steps += count
        if self.budget.steps > MAX_STEPS:
            raise _OutOfSteps

    def _assign(self, name: str, value: str) -> None:
        """Set a variable, if the variables the shells made still fit :data:`MAX_MEMORY`."""
        size, freed = len(name) + len(value), self.held.get(name, 0)
        if self.budget.held - freed + size > MAX_MEMORY:
            raise _out_of_memory()
        self.budget.held += size - freed
        self.held[name] = size
        self.vars[name] = value

    def _unassign(self, name: str) -> None:
        self.budget.held -= self.held.pop(name, 0)
        self.vars.pop(name, None)
        self.exported.discard(name)

    def _release(self) -> None:
        """The shell ended: its variables no longer count."""
        self.budget.held -= sum(self.held.values())
        self.held.clear()

    def _grow_files(self, size: int) -> None:
        if self.budget.written + size > MAX_WRITTEN:
            raise ShellError(f"the files written hold more than {MAX_WRITTEN} bytes")
        self.budget.written += size

    def _truncate(self, path: str) -> None:
        """Make ``path`` an empty file of the shell's: a new name counts, what it wrote there no more."""
        files = self.context.files
        if path not in files:
            self._grow_files(len(path))
        elif path in self.budget.owned:
            self.budget.written -= len(files[path])
        self.budget.owned.add(path)
        files[path] = b""

    # -- the tree -------------------------------------------------------------------------------
    def _node(self, node: Node, fds: dict[int, Target]) -> Run:
        if isinstance(node, Simple):
            self.status = yield from self._simple(node, fds)
        elif isinstance(node, Sequence):
            self.budget.depth += 1  # as the parser counts it: a script this one starts nests below
            try:
                for item in node.items:
                    yield from self._node(item, fds)
            finally:
                self.budget.depth -= 1
        elif isinstance(node, AndOr):
            yield from self._node(node.first, fds)
            for op, item in node.rest:
                if (self.status == 0) == (op == "&&"):
                    yield from self._node(item, fds)
        elif isinstance(node, Loop):
            last = 0
            while True:
                self._step()  # every round, whatever its lists hold
                yield from self._node(node.cond, fds)
                if (self.status == 0) == node.until:
                    break
                yield from self._node(node.body, fds)
                last = self.status
            self.status = last
        elif isinstance(node, For):
            values = self.args if node.words is None else self._fields(node.words)
            self.status = 0
            for value in values:
                self._step()
                self._assign(node.name, value)
                yield from self._node(node.body, fds)
        else:
            for cond, body in node.branches:
                yield from self._node(cond, fds)
                if self.status == 0:
                    yield from self._node(body, fds)
                    return self.status
            self.status = 0
            if node.otherwise is not None:
                yield from self._node(node.otherwise, fds)
        return self.status

    def _simple(self, node: Simple, fds: dict[int, Target]) -> Run:
        self._step()
        argv = self._fields(node.words)
        values: dict[str, str] = {}
        size = 0
        for name, word in node.assigns:
            values[name] = self._word(word)
            size += len(name) + len(values[name])
            if size > MAX_MEMORY:
                raise _out_of_memory()
        if not argv:
            for name, value in values.items():
                self._assign(name, value)
            return 0
        fds = dict(fds)
        stdin: str | None = None
        for redirect in node.redirects:
            target = self._word(redirect.target)
            if redirect.op in (">&", "<&"):
                if target not in ("1", "2"):
                    yield from self._write(fds, STDERR, f"{self.name}: {target}: bad file descriptor\n")
                    return 1
                fds[redirect.fd] = fds.get(int(target))
            elif redirect.op == "<":
                stdin = self._path(target)
                if stdin not in self.context.files:
                    yield from self._write(fds, STDERR, f"{self.name}: can't open {target}: no such file\n")
                    return 1
            elif target == "/dev/null":
                fds[redirect.fd] = None
            else:
                path = self._path(target)
                if path.endswith("/") or self._is_dir(path):
                    yield from self._write(fds, STDERR, f"{self.name}: can't create {target}: Is a directory\n")
                    return 1
                if redirect.op == ">" or path not in self.context.files:
                    self._truncate(path)
                fds[redirect.fd] = path
        env = {name: value for name, value in self.vars.items() if name in self.exported} | values
        return (yield from self._program(argv, fds, stdin, env))

    def _fields(self, words: list[Word]) -> list[str]:
        """The argument list ``words`` expand to, at most :data:`MAX_MEMORY` bytes as a kernel
        counts ``ARG_MAX`` (each string, its terminator and its pointer)."""
        fields: list[str] = []
        size = 0
        for word in words:
            for value in self._expand(word):
                fields.append(value)
                size += len(value) + 9
            if size > MAX_MEMORY:
                raise _out_of_memory()
        return fields

    def _word(self, word: Word) -> str:
        """``word`` expanded as one field (an assignment's value, a redirection's target)."""
        pieces: list[str] = []
        size = 0
        for part in word:
            pieces.append(self._parameter(part.text) if part.var else part.text)
            size += len(pieces[-1])
            if size > MAX_MEMORY:
                raise _out_of_memory()
        self._step(size // STEP_BYTES)
        return "".join(pieces)

    def _expand(self, word: Word) -> list[str]:
        """The fields of ``word``: parameters expanded; an unquoted one split at whitespace. They
        are built within :data:`MAX_MEMORY`, and each :data:`STEP_BYTES` of them is a step."""
        fields: list[str] = []
        current: list[str] = []
        had = False  # the current field has something (quoted empty counts)
        size = 0

        def add(text: str) -> None:
            nonlocal size
            size += len(text)
            if size > MAX_MEMORY:
                raise _out_of_memory()
            current.append(text)

        def end_field() -> None:
            nonlocal current, had, size
            fields.append("".join(current))
            current, had = [], False
            size += 9  # a field costs what an argument costs (``_fields``), empty ones too
            if size > MAX_MEMORY:
                raise _out_of_memory()

        for part in word:
            if not part.var:
                add(part.text)
                had = had or bool(part.text) or part.quoted
                continue
            if part.text == "@" and part.quoted:
                for k, arg in enumerate(self.args):
                    if k:
                        end_field()
                    add(arg)
                    had = True
                continue
            value = self._parameter(part.text)
            if part.quoted:
                add(value)
                had = True
                continue
            pieces = value.split()
            if not pieces:
                continue
            if value[:1].isspace() and had:
                end_field()
            for k, piece in enumerate(pieces):
                if k:
                    end_field()
                add(piece)
                had = True
            if value[-1:].isspace():
                end_field()
        if had or current and "".join(current):
            end_field()
        self._step(size // STEP_BYTES)
        return fields

    def _parameter(self, name: str) -> str:
        if name == "?":
            return str(self.status)
        if name == "#":
            return str(len(self.args))
        if name in ("@", "*"):
            return " ".join(self.args)
        if name == "$":
            return "1"
        if name.isdigit():
            index = int(name)
            return self.name if index == 0 else self.args[index - 1] if index <= len(self.args) else ""
        return self.vars.get(name, "")

    # -- output ---------------------------------------------------------------------------------
    def _write(self, fds: dict[int, Target], fd: int, text: str | bytes, *, counted: bool = False) -> Iterator[Event]:
        """Write to ``fd``: each :data:`STEP_BYTES` is a step unless ``counted`` already (a child
        shell's output) or paced by the client (stdin copied)."""
        data = text.encode() if isinstance(text, str) else text
        if not counted:
            self._step(len(data) // STEP_BYTES)
        target = fds.get(fd, fd)
        if target is None or not data:
            return
        if isinstance(target, str):
            self._grow_files(len(data))
            self.context.files[target] = self.context.files.get(target, b"") + data
            return
        yield Write(target, data)

    # -- files ------------------------------------------------------------------------------------
    def _path(self, name: str) -> str:
        path = posixpath.normpath(posixpath.join(self.context.cwd, name)) if name else ""
        return "/" + path.lstrip("/") if path.startswith("//") else path

    def _is_dir(self, path: str) -> bool:
        self._step(len(self.context.files) // STEP_FILES)  # a look through every file
        prefix = path.rstrip("/") + "/"
        return path == "/" or any(p.startswith(prefix) for p in self.context.files)

    def _children(self, path: str) -> list[str]:
        self._step(len(self.context.files) // STEP_FILES)
        prefix = path.rstrip("/") + "/"
        names = {p[len(prefix):].split("/", 1)[0] for p in self.context.files if p.startswith(prefix)}
        return sorted(name for name in names if name)

    # -- programs ---------------------------------------------------------------------------------
    def _program(self, argv: list[str], fds: dict[int, Target], stdin: str | None,
                 env: Mapping[str, str] | None = None) -> Run:
        program, args = argv[0], argv[1:]
        base = posixpath.basename(program)
        builtin = _BUILTINS.get(base)
        if program in SHELLS or base in ("sh", "bash", "ash", "dash") and program.startswith("/"):
            return (yield from self._sh(args, fds, stdin, env))
        if builtin is not None and ("/" not in program or program.startswith(("/bin/", "/usr/bin/", "/sbin/"))):
            return (yield from builtin(self, args, fds, stdin))
        if self.context.image_process:
            code = yield ImageProcess(tuple(argv))
            return int(code) if isinstance(code, int) else 0
        yield from self._write(fds, STDERR, f"{self.name}: {program}: not found\n")
        return 127

    def _sh(self, args: list[str], fds: dict[int, Target], stdin: str | None, env: Mapping[str, str] | None) -> Run:
        """A child shell, one deeper: ``-c SCRIPT``, a script file, or the lines of its stdin."""
        child_context = Context(env=dict(env if env is not None else self.context.env), files=self.context.files,
                                hostname=self.context.hostname, cwd=self.context.cwd,
                                image_process=self.context.image_process, tty=self.context.tty, now=self.context.now)
        options = [a for a in args[:1] if a.startswith("-") and a != "-c" and set(a[1:]) <= set("eilsux")]
        args = args[len(options):]
        script: str | None = None
        if args[:1] == ["-c"]:
            if len(args) < 2:
                yield from self._write(fds, STDERR, "sh: -c requires an argument\n")
                return 2
            child = Shell(child_context, name=args[2] if len(args) > 2 else "sh", args=tuple(args[3:]), budget=self.budget)
            script = args[1]
        elif args:
            path = self._path(args[0])
            if path not in self.context.files:
                yield from self._write(fds, STDERR, f"sh: can't open '{args[0]}': No such file or directory\n")
                return 127 if not self._is_dir(path) else 126
            child = Shell(child_context, name=args[0], args=tuple(args[1:]), budget=self.budget)
            script = self.context.files[path].decode(errors="replace")
        else:
            child = Shell(child_context, budget=self.budget)
        self.budget.depth += 1
        try:
            if self.budget.depth > MAX_DEPTH:
                raise ShellError(f"shells nest deeper than {MAX_DEPTH}")
            if script is None:
                return (yield from self._interactive(child, fds, stdin))
            return (yield from _redirected(child.run_script(script), lambda data, fd: self._write(fds, fd, data, counted=True)))
        finally:
            self.budget.depth -= 1
            child._release()

    def _interactive(self, child: Shell, fds: dict[int, Target], stdin: str | None) -> Run:
        """``sh`` with no script: ``child`` runs each line of stdin as it comes (a line at most
        :data:`MAX_SCRIPT` bytes)."""
        pending = b""
        source = iter([self.context.files.get(stdin, b""), None]) if stdin is not None else None
        while True:
            if child.context.tty and source is None and not pending:
                yield from self._write(fds, STDERR, f"{child.context.cwd} # ")
            chunk = next(source) if source is not None else (yield Read())
            if chunk is None:
                lines, pending = [pending] if pending else [], b""
            else:
                assert isinstance(chunk, bytes)
                *lines, pending = (pending + chunk).split(b"\n")
                if len(pending) > MAX_SCRIPT:
                    raise ShellError(f"a line is longer than {MAX_SCRIPT} bytes")
            for line in lines:
                try:
                    yield from _redirected(child._script_line(line.decode(errors="replace")),
                                           lambda data, fd: self._write(fds, fd, data, counted=True))
                except _Exit as stop:
                    return stop.code
            if chunk is None:
                return child.status

    def _script_line(self, line: str) -> Run:
        try:
            tree = parse(line, self.budget.depth)
        except ShellError as err:
            yield Write(STDERR, f"{self.name}: {err}\n".encode())
            self.status = 2
            return 2
        return (yield from self._node(tree, {STDOUT: STDOUT, STDERR: STDERR}))


def _out_of_memory() -> ShellError:
    return ShellError(f"out of memory (a shell holds at most {MAX_MEMORY} bytes in variables and words)")


def _redirected(run: Run, write: Callable[[bytes, int], Iterator[Event]]) -> Run:
    """A child shell's run with its output passed through its parent's descriptors."""
    sent: bytes | int | None = None
    while True:
        try:
            event = run.send(sent)
        except StopIteration as done:
            return int(done.value)
        sent = None
        if isinstance(event, Write):
            yield from write(event.data, event.stream)
        else:
            sent = yield event


# -- the builtins --------------------------------------------------------------------------------------
Builtin = Callable[[Shell, list[str], dict[int, Target], "str | None"], Run]
_BUILTINS: dict[str, Builtin] = {}


def builtin(*names: str) -> Callable[[Builtin], Builtin]:
    def register(fn: Builtin) -> Builtin:
        for name in names:
            _BUILTINS[name] = fn
        return fn
    return register


_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", "r": "\r", "a": "\a", "b": "\b", "0": "\0", "e": "\x1b"}


def _unescape(text: str) -> tuple[str, bool]:
    """``echo -e``'s escapes; True when ``\\c`` ends the output there."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            c = text[i + 1]
            if c == "c":
                return "".join(out), True
            out.append(_ESCAPES.get(c, "\\" + c))
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out), False


@builtin("echo")
def _echo(sh: Shell, args: list[str], fds: dict[int, Target], stdin: str | None) -> Run:
    newline, escapes = True, False
    while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
        newline = newline and "n" not in args[0]
        escapes = "e" in args[0]
        args = args[1:]
    text = " ".join(args)
    if escapes:
        text, stop = _unescape(text)
        newline = newline and not stop
    yield from sh._write(fds, STDOUT, text + ("\n" if newline else ""))
    return 0


@builtin("printf")
def _printf(sh: Shell, args: list[str], fds: dict[int, Target], stdin: str | None) -> Run:
    if not args:
        yield from sh._write(fds, STDERR, "printf: usage: printf FORMAT [ARGUMENT...]\n")
        return 1
    fmt, values = _unescape(args[0])[0], args[1:]
    out: list[str] = []
    size = 0
    while True:  # the format again while arguments are left, if it takes any (as coreutils')
        i, taken = 0, len(values)
        while i < len(fmt):
            if size > MAX_MEMORY:
                raise _out_of_memory()
            if fmt[i] == "%" and i + 1 < len(fmt):
                spec = fmt[i + 1]
                if spec == "%":
                    out.append("%")
                elif spec in "sdib":
                    value = values.pop(0) if values else ""
                    if spec in "di":
                        try:
                            value = str(int(value or "0"))
                        except ValueError:
                            value = "0"
                    elif spec == "b":
                        value = _unescape(value)[0]
                    out.append(value)
                else:
                    out.append(fmt[i:i + 2])
                i += 2
            else:
                out.append(fmt[i])
                i += 1
            size += len(out[-1])
        if not values or len(values) == taken:
            break
    yield from sh._write(fds, STDOUT, "".join(out))
    return 0


@builtin("cat")
def _cat(sh: Shell, args: list[str], fds: dict[int, Target], stdin: str | None) -> Run:
    code = 0
    for name in [a for a in args if a != "--"] or ["-"]:
        if name == "-" and stdin is not None:
            yield from sh._write(fds, STDOUT, sh.context.files.get(stdin, b""))
            continue
        if name == "-":  # each chunk as it comes, as a real cat copies its input
            while (chunk := (yield Read())) is not None:
                assert isinstance(chunk, bytes)
                yield from sh._write(fds, STDOUT, chunk, counted=True)  # paced by the client, not a step
            continue
        if name.startswith("-") and len(name) > 1:
            continue  # -u and the like change nothing here
        path = sh._path(name)
        if path in sh.context.files:
            yield from sh._write(fds, STDOUT, sh.context.files[path])
        else:
            why = "Is a directory" if sh._is_dir(path) else "No such file or directory"
            yield from sh._write(fds, STDERR, f"cat: can't open '{name}': {why}\n")
            code = 1
    return code


@builtin("env", "printenv")
def _env(sh: Shell, args: list[str], fds: dict[int, Target], stdin: str | None) -> Run:
    env = {name: value for name, value in sh.vars.items() if name in sh.exported}
    names = [a for a in args if not a.startswith("-")]
    if names and "=" not in names[0]:  # printenv NAME..., or env PROGRAM: the program is not run by env here
        if any(name not in env for name in names) and "=" not in names[0]:
            for name in names:
                if name in env:
                    yield from sh._write(fds, STDOUT, env[name] + "\n")
            return 1
        for name in names:
            yield from sh._write(fds, STDOUT, env[name] + "\n")
        return 0
    yield from sh._write(fds, STDOUT, "".join(f"{k}={v}\n" for k, v in env.items()))
    return 0


@builtin("hostname")
def _hostname(sh: Shell, args: list[str], fds: dict[int, Target], stdin: str | None) -> Run:
    yield from sh._write(fds, STDOUT, sh.context.hostname + "\n")
    return 0


@builtin("exit")
def _exit(sh: Shell, args: list[str], fds: dict[int, Target], stdin: str | None) -> Run:
    if args:
        try:
            code = int(args[0]) % 256
        except ValueError:
            yield from sh._write(fds, STDERR, f"{sh.name}: exit: Illegal number: {args[0]}\n")
            code = 2
    else:
        code = sh.status
    raise _Exit(code)
    yield  # a generator, like every builtin


@builtin("true", ":")
def _true(sh: Shell, args: list[str], fds: dict[int, Target], stdin: str | None) -> Run:
    return 0
    yield


@builtin("false")
def _false(sh: Shell, args: list[str], fds: dict[int, Target], stdin: str | None) -> Run:
    return 1
    yield


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@builtin("sleep")
def _sleep(sh: Shell, args: list[str], fds: dict[int, Target], stdin: str | None) -> Run:
    if not args:
        yield from sh._write(fds, STDERR, "sleep: missing operand\n")
        return 1
    total = 0.0
    for arg in args:
        if arg in ("inf", "infinity"):
            yield Sleep(None)
            return 0
        number, unit = (arg[:-1], arg[-1]) if arg[-1:] in _UNITS else (arg, "s")
        try:
            value = float(number) * _UNITS[unit]
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < 0:
            yield from sh._write(fds, STDERR, f"sleep: invalid number '{arg}'\n")
            return 1
        total += value
    yield Sleep(total)
    return 0


@builtin("ls")
def _ls(sh: Shell, args: list[str], fds: dict[int, Target], stdin: str | None) -> Run:
    flags = "".join(a[1:] for a in args if a.startswith("-") and len(a) > 1)
    names = [a for a in args if not a.startswith("-") or a == "-"] or ["."]
    code = 0
    for k, name in enumerate(names):
        path = sh._path(name)
        if path in sh.context.files:
            yield from sh._write(fds, STDOUT, _ls_entry(sh, name, path, "l" in flags) + "\n")
            continue
        if not sh._is_dir(path):
            yield from sh._write(fds, STDERR, f"ls: {name}: No such file or directory\n")
            code = 1
            continue
        entries = sh._children(path)
        if "a" in flags:
            entries = [".", "..", *entries]
        else:
            entries = [e for e in entries if not e.startswith(".")]
        if len(names) > 1:
            yield from sh._write(fds, STDOUT, ("\n" if k else "") + f"{name}:\n")
        if "l" in flags:
            lines = [_ls_entry(sh, e, posixpath.join(path, e), True) for e in entries]
            yield from sh._write(fds, STDOUT, f"total {len(entries)}\n" + "".join(line + "\n" for line in lines))
        elif entries:
            yield from sh._write(fds, STDOUT, "\n".join(entries) + "\n")
    return code


def _ls_entry(sh: Shell, name: str, path: str, long: bool) -> str:
    if not long:
        return name
    if path in sh.context.files:
        return f"-rw-r--r--    1 root     root     {len(sh.context.files[path]):>8} {name}"
    return f"drwxr-xr-x    2 root     root     {4096:>8} {name}"


@builtin("pwd")
def _pwd(sh: Shell, args: list[str], fds: dict[int, Target], stdin: str | None) -> Run:
    yield from sh._write(fds, STDOUT, sh.context.cwd + "\n")
    return 0


@builtin("cd")
def _cd(sh: Shell, args: list[str], fds: dict[int, Target], stdin: str | None) -> Run:
    path = sh._path(args[0] if args else sh.vars.get("HOME", "/"))
    if not sh._is_dir(path):
        yield from sh._write(fds, STDERR, f"{sh.name}: cd: can't cd to {args[0] if args else path}: No such file or directory\n")
        return 2
    sh.context.cwd = path
    sh._assign("PWD", path)
    return 0


@builtin("export")
def _export(sh: Shell, args: list[str], fds: dict[int, Target], stdin: str | None) -> Run:
    for arg in args:
        name, eq, value = arg.partition("=")
        if eq:
            sh._assign(name, value)
        sh.exported.add(name)
    if not args:
        lines = [f"export {n}={shlex.quote(sh.vars[n])}\n" for n in sorted(sh.exported) if n in sh.vars]
        yield from sh._write(fds, STDOUT, "".join(lines))
    return 0


@builtin("unset")
def _unset(sh: Shell, args: list[str], fds: dict[int, Target], stdin: str | None) -> Run:
    for name in args:
        sh._unassign(name)
    return 0
    yield


@builtin("test", "[")
def _test(sh: Shell, args: list[str], fds: dict[int, Target], stdin: str | None) -> Run:
    if args and args[-1] == "]":
        args = args[:-1]
    negate = False
    while args and args[0] == "!":
        negate, args = not negate, args[1:]
    try:
        result = _truth(sh, args)
    except ValueError as err:
        yield from sh._write(fds, STDERR, f"{sh.name}: test: {err}\n")
        return 2
    return 0 if result != negate else 1


def _truth(sh: Shell, args: list[str]) -> bool:
    if not args:
        return False
    if len(args) == 1:
        return bool(args[0])
    if len(args) == 2:
        op, value = args
        path = sh._path(value)
        checks = {"-n": lambda: bool(value), "-z": lambda: not value, "-e": lambda: path in sh.context.files or sh._is_dir(path),
                  "-f": lambda: path in sh.context.files, "-d": lambda: sh._is_dir(path),
                  "-s": lambda: bool(sh.context.files.get(path)), "-r": lambda: path in sh.context.files or sh._is_dir(path)}
        if op not in checks:
            raise ValueError(f"{op}: unary operator expected")
        return checks[op]()
    if len(args) == 3:
        left, op, right = args
        if op in ("=", "=="):
            return left == right
        if op == "!=":
            return left != right
        numeric = {"-eq": int.__eq__, "-ne": int.__ne__, "-lt": int.__lt__, "-le": int.__le__, "-gt": int.__gt__,
                   "-ge": int.__ge__}
        if op in numeric:
            try:
                return bool(numeric[op](int(left), int(right)))
            except ValueError:
                raise ValueError(f"{left if not left.lstrip('-').isdigit() else right}: bad number") from None
        raise ValueError(f"{op}: unknown operand")
    raise ValueError("too many arguments")


@builtin("whoami")
def _whoami(sh: Shell, args: list[str], fds: dict[int, Target], stdin: str | None) -> Run:
    yield from sh._write(fds, STDOUT, "root\n")
    return 0


@builtin("id")
def _id(sh: Shell, args: list[str], fds: dict[int, Target], stdin: str | None) -> Run:
    yield from sh._write(fds, STDOUT, "uid=0(root) gid=0(root) groups=0(root)\n")
    return 0


@builtin("uname")
def _uname(sh: Shell, args: list[str], fds: dict[int, Target], stdin: str | None) -> Run:
    yield from sh._write(fds, STDOUT, ("Linux " + sh.context.hostname + " 6.1.0-kplane x86_64" if "-a" in args else "Linux") + "\n")
    return 0


@builtin("date")
def _date(sh: Shell, args: list[str], fds: dict[int, Target], stdin: str | None) -> Run:
    moment = datetime.fromtimestamp(sh.context.now(), UTC)
    yield from sh._write(fds, STDOUT, moment.strftime("%a %b %e %H:%M:%S UTC %Y") + "\n")
    return 0
