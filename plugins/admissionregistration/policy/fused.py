"""A ValidatingAdmissionPolicy as one CEL program: its ``matchConditions``, the ``variables``
they read and its ``validations``, evaluated in one call on an activation every policy of the
request shares (the request's objects converted to CEL once, not once per expression).

This is the path of a request the policy admits, which is nearly every request: its answer is
taken only when it says so - ``[]`` (a condition is false) or every validation true. Anything
else (an error, a false, a value that is not a bool) and the policy is evaluated again
expression by expression (:func:`.validating.validate`), which words kube's errors and messages
and keeps its lazy variables, a variable that fails being an error only for what reads it. So
a fused program never decides differently from the expressions it is made of: where they all
succeed it computes the same values, and where one does not it decides nothing.

A policy is fused only when that is sound and cheap: every expression compiled and bounded in
cost by what it reads (:func:`.expressions.bounded`; an estimate is per expression), each
variable reading only variables before it, no audit annotations.

Many policies on one resource are evaluated :data:`CHUNK` at a time as one program
(:class:`Batches`), on the request's own version and no params, before each is matched: an
admitting verdict needs no evaluation of its own once the policy matches in that version. A
chunk that errors anywhere decides nothing, and its policies are evaluated one by one.
"""

from __future__ import annotations

import dataclasses
import json
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

from kplane.plugins.admissionregistration.expressions import CompileError, Declarations, bounded, compile_expression
from kplane.plugins.admissionregistration.policy.variables import Variable, variables_read

_ERRORS = (RuntimeError, ValueError, TypeError, OverflowError)  # values the binding cannot take
CHUNK = 16  # policies per batched program: its compile time (~4 ms) and what an error in one of them costs
BATCHES = 256  # batched programs kept
COMPILES_PER_REQUEST = 2  # new batched programs one request may compile (what it may hold the loop for)


@dataclasses.dataclass(frozen=True, eq=False, slots=True)
class Fused:
    """A policy's fused program and the source it was compiled from (for batching)."""

    source: str
    program: Any


def _grouped(source: str) -> str:
    """``source`` as one operand: on lines of its own, so that a trailing ``// comment`` ends there."""
    return f"(\n{source}\n)"


def _needed(programs: Sequence[Any], variables: Sequence[Variable]) -> list[Variable] | None:
    """The variables ``programs`` read, directly or through other variables, in spec order;
    None when one is read whole, is not declared, or reads a variable after it."""
    by_name = {v.name: i for i, v in enumerate(variables)}
    wanted: set[str] = set()
    pending = [variables_read(p) for p in programs]
    while pending:
        names = pending.pop()
        if names is None:
            return None
        for name in names - wanted:
            if name not in by_name or variables[by_name[name]].program is None:
                return None
            wanted.add(name)
            pending.append(variables[by_name[name]].reads)
    needed = [v for v in variables if v.name in wanted]
    for i, variable in enumerate(needed):
        if variable.reads is None or not variable.reads <= {v.name for v in needed[:i]}:
            return None
    return needed


def fuse(conditions: Sequence[tuple[str, Any]], variables: Sequence[Variable], validations: Sequence[tuple[str, Any]],
         declarations: Declarations) -> Fused | None:
    """The fused program of a policy's ``(source, program)`` conditions and validations (a
    program None: it did not compile) and its compiled variables, or None where it cannot be."""
    expressions = [*conditions, *validations]
    if not validations or any(p is None or not bounded(p) for _, p in expressions):
        return None
    needed = _needed([p for _, p in expressions], variables)
    if needed is None or any(not bounded(v.program) for v in needed):
        return None
    source = "[" + ", ".join(_grouped(s) for s, _ in validations) + "]"
    if conditions:
        source = " && ".join(_grouped(s) for s, _ in conditions) + f" ? {source} : []"
    for i in range(len(needed) - 1, -1, -1):  # each level binds the ones before it again, and its own
        entries = [f"{json.dumps(v.name)}: variables.{v.name}" for v in needed[:i]]
        entries.append(f"{json.dumps(needed[i].name)}: {_grouped(needed[i].expression)}")
        source = f"cel.bind(variables, {{{', '.join(entries)}}}, {source})"
    try:
        return Fused(source, compile_expression(source, declarations, want="DYN"))
    except CompileError:  # too deep for the parser, say: the expressions run one by one
        return None


def _value(program: Any, activation: Any) -> Any:
    """The plain result of ``program``, None when it failed."""
    try:
        result = program.eval(activation=activation)
        return None if result.type().name() == "ERROR" else result.plain_value()
    except _ERRORS:
        return None


def _admitting(values: Any) -> bool:
    return isinstance(values, list) and all(v is True for v in values)


def admits(fused: Fused, activation: Any) -> bool:
    """Whether a fused program admits the request outright (no condition matched, or every
    validation true); False means only "evaluate it expression by expression"."""
    return _admitting(_value(fused.program, activation))


class Batches:
    """Fused policies evaluated :data:`CHUNK` at a time as one program each, compiled the first
    time a request's policies are seen together (and kept for the next ones)."""

    def __init__(self, declarations: Declarations) -> None:
        self._declarations = declarations
        self._programs: OrderedDict[tuple[int, ...], tuple[tuple[Fused, ...], Any]] = OrderedDict()

    def _kept(self, chunk: tuple[Fused, ...]) -> tuple[bool, Any]:
        """Whether the chunk's program was made, and the program (None: it did not compile)."""
        key = tuple(id(f) for f in chunk)
        found = self._programs.get(key)
        if found is None or not all(a is b for a, b in zip(found[0], chunk)):
            return False, None
        self._programs.move_to_end(key)
        return True, found[1]

    def _compile(self, chunk: tuple[Fused, ...]) -> Any:
        try:
            program = compile_expression("[" + ", ".join(_grouped(f.source) for f in chunk) + "]",
                                         self._declarations, want="DYN")
        except CompileError:
            program = None
        # The chunk is kept with its program: the ids of its policies are not reused while it lives.
        self._programs[tuple(id(f) for f in chunk)] = (chunk, program)
        if len(self._programs) > BATCHES:
            self._programs.popitem(last=False)
        return program

    def admitted(self, policies: Iterable[Fused], activation: Any) -> set[Fused]:
        """Those of ``policies`` (evaluated with ``activation``) that admit the request outright.
        A request compiles at most :data:`COMPILES_PER_REQUEST` new chunks (a few ms each, on
        the event loop); the policies of the others are evaluated one by one this time."""
        policies = tuple(policies)
        out: set[Fused] = set()
        compiles = 0
        for start in range(0, len(policies), CHUNK):
            chunk = policies[start:start + CHUNK]
            known, program = self._kept(chunk)
            if not known:
                if compiles == COMPILES_PER_REQUEST:
                    continue
                program, compiles = self._compile(chunk), compiles + 1
            values = None if program is None else _value(program, activation)
            if isinstance(values, list) and len(values) == len(chunk):
                out.update(f for f, v in zip(chunk, values) if _admitting(v))
        return out
