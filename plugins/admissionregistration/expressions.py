"""The CEL of admission (kube's ``admission/plugin/cel``): the variables webhooks' match
conditions and policies' expressions see, and their compilation in ``kplane.api.cel``'s one
environment.

Variables, as Kubernetes declares them: ``object`` and ``oldObject`` (the request's objects, null
where the operation has none), ``request`` (the AdmissionReview's request), ``namespaceObject``
(the request's Namespace), and where a use has them ``params`` (a policy's parameter object),
``authorizer`` (checks of the requesting user's permissions) and ``variables`` (a policy's
named ``variables``).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any

from kplane.api import cel
from kplane.plugins.admissionregistration.attributes import Attributes


@dataclasses.dataclass(frozen=True, slots=True)
class Declarations:
    """Which of the optional variables an expression may use (``OptionalVariableDeclarations``)."""

    params: bool = False
    authorizer: bool = False
    variables: bool = False

    def signatures(self) -> dict[str, str]:
        out = {"object": "dyn", "oldObject": "dyn", "request": "map(string, dyn)", "namespaceObject": "dyn"}
        if self.params:
            out["params"] = "dyn"
        if self.authorizer:
            out["authorizer"] = "dyn"
        if self.variables:
            out["variables"] = "map(string, dyn)"
        return out


class CompileError(Exception):
    """An expression that does not compile or has the wrong result type; ``detail`` is kube's
    wording. ``internal``: it checks, but no program could be made of it (kube's
    ErrorTypeInternal, a field's InternalError where the others are Invalid)."""

    def __init__(self, detail: str, *, internal: bool = False) -> None:
        super().__init__(detail)
        self.detail = detail
        self.internal = internal


#: CEL's names of the result types an expression may be asked for (kube's wording).
_TYPE_NAMES = {"BOOL": "bool", "STRING": "string", "NULL": "null_type"}


def compile_expression(source: str, declarations: Declarations, want: str | tuple[str, ...] = "BOOL",
                       constructions: frozenset[int] = frozenset()) -> Any:
    """A compiled ``cel.Expression`` of ``source``; ``want``: the result type it must have
    (``BOOL``, ``STRING``, or ``DYN`` for anything), or a tuple of those it may have (an audit
    annotation's ``("STRING", "NULL")``); ``constructions``: where map literals standing for
    typed objects open (a mutation's rewritten ``Object{...}``). Raises CompileError."""
    try:
        program = cel.environment.compile(cel.environment.new(declarations.signatures()), source, constructions)
    except cel.validators.InstantiationError as err:
        raise CompileError(f"program instantiation failed: {err}", internal=True) from None
    except RuntimeError as err:
        raise CompileError(f"compilation failed: {cel.environment.status_text(err)}") from None
    returns = program.return_type().name()
    wants = (want,) if isinstance(want, str) else want
    if "DYN" not in wants and returns not in (*wants, "DYN"):
        if len(wants) == 1:
            raise CompileError(f"must evaluate to {_TYPE_NAMES.get(wants[0], wants[0].lower())}")
        raise CompileError(f"must evaluate to one of [{' '.join(_TYPE_NAMES.get(w, w.lower()) for w in wants)}]")
    return program


# -- evaluation --------------------------------------------------------------------------------

#: cel-cpp's wording of an evaluation error → cel-go's, which kube's messages carry.
_GO_WORDING = ((re.compile(r'^Key not found in map : "?(.*?)"?$'), r"no such key: \1"),
               (re.compile(r"^No matching overloads? .*"), "no such overload"),
               (re.compile(r"^No value with name \"(.*)\" found in Activation$"), r"undeclared reference to '\1'"))


class EvaluationError(Exception):
    """An expression that failed at run time; ``detail`` is cel-go's wording of why."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def _go_wording(text: str) -> str:
    text = cel.environment.status_text(text)
    for pattern, replacement in _GO_WORDING:
        if pattern.match(text):
            return pattern.sub(replacement, text)
    return text


#: The most an evaluation may cost, in cel-go's units (kube's per-expression budget). The binding
#: meters nothing and cannot be interrupted, so an expression whose cost on the values at hand
#: may exceed it is not evaluated at all.
COST_LIMIT = cel.cost.PER_EXPRESSION_LIMIT
_COSTLY = {"@in", "_+_", "join", "split", "replace", "format", "matches", "find", "findAll",
           "sets.contains", "sets.equivalent", "sets.intersects"}


@functools.lru_cache(maxsize=8192)
def _costly(program: Any) -> Any:
    """The tree of an expression whose cost grows faster than what it reads (a comprehension,
    list or string work), else None: the others are bounded by the request's size."""
    tree = cel.checked.tree(program.serialize())

    def heavy(node: Any) -> bool:
        if node.kind == "comprehension" or (node.kind == "call" and node.name in _COSTLY):
            return True
        return any(heavy(c) for c in node.children())
    return tree if heavy(tree) else None


def bounded(program: Any) -> bool:
    """Whether an expression's cost is bounded by the size of what it reads (no comprehension,
    list or string work): one that is needs no estimate before it runs."""
    return _costly(program) is None


def _within_budget(program: Any, handed: dict[str, Any]) -> bool:
    tree = _costly(program)
    if tree is None:
        return True
    return cel.cost.Estimator.cost_of(tree, {name: cel.cost.schema_of(v) for name, v in handed.items()}) <= COST_LIMIT


def evaluate(program: Any, data: dict[str, Any]) -> Any:
    """``program``'s result on the variables ``data`` as a plain Python value. Raises
    EvaluationError (never the binding's own exceptions), kube's "actual cost limit exceeded"
    when it would cost more than :data:`COST_LIMIT` on these values."""
    handed = {}
    for name, paths in reads(program).items():
        if name in data:
            handed[name] = data[name] if paths is None else _pruned(data[name], paths)
    if not _within_budget(program, handed):
        raise EvaluationError("operation cancelled: actual cost limit exceeded")
    try:
        result = program.eval(data=handed)
        if result.type().name() == "ERROR":
            raise EvaluationError(_go_wording(str(result.value())))
        return result.plain_value()
    except (RuntimeError, ValueError, TypeError, OverflowError) as err:  # values the binding cannot take
        raise EvaluationError(_go_wording(str(err))) from None


def namespace_object(namespace: dict[str, Any] | None) -> dict[str, Any] | None:
    """The ``namespaceObject`` variable: the request's Namespace, only the metadata fields kube
    keeps (``CreateNamespaceObject``), its spec and its status."""
    if namespace is None:
        return None
    meta = namespace.get("metadata") or {}
    kept = {k: meta[k] for k in ("name", "generateName", "namespace", "uid", "resourceVersion", "generation",
                                 "creationTimestamp", "deletionTimestamp", "labels", "annotations") if k in meta}
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Namespace", "metadata": kept}
    for part in ("spec", "status"):
        if part in namespace:
            out[part] = namespace[part]
    return out


def activation(attrs: Attributes, version: str, uid: str = "", *, namespace: dict[str, Any] | None = None,
               params: dict[str, Any] | None = None, authorizer: Any = None) -> dict[str, Any]:
    """The variables of an expression about the request ``attrs`` seen in ``version``:
    ``object``, ``oldObject``, ``request``, ``namespaceObject`` (from the Namespace wire dict
    ``namespace``), and ``params``/``authorizer`` (the caller's, declared or not)."""
    obj, old = attrs.objects(version)
    return {"object": obj, "oldObject": old, "request": attrs.review_request(uid, version),
            "namespaceObject": namespace_object(namespace), "params": params, "authorizer": authorizer}



#: The parts of a variable an expression reads: paths of field names (``object.metadata.name``:
#: ``("metadata", "name")``), none under another, or None for the whole value.
Paths = tuple[tuple[str, ...], ...] | None


def _chain(node: Any) -> tuple[str, tuple[str, ...]] | None:
    """``(variable, path)`` of a select chain down to a variable (``object.spec.replicas``)."""
    path: list[str] = []
    while node.kind == "select" and node.args:
        path.append(node.name)
        node = node.args[0]
    if node.kind != "ident" or not path:
        return None
    return node.name, tuple(reversed(path))


@functools.lru_cache(maxsize=8192)
def reads(program: Any) -> dict[str, Paths]:
    """What a compiled expression reads of each top-level variable, worked out once per
    expression: only that is handed to it, since converting a whole object to CEL costs more
    than most expressions do (and a value's unread parts cannot change the result)."""
    found: dict[str, set[tuple[str, ...]] | None] = {}

    def walk(node: Any) -> None:
        chain = _chain(node) if node.kind == "select" else None
        if chain is not None:
            name, path = chain
            if found.get(name, set()) is not None:
                found.setdefault(name, set()).add(path)  # type: ignore[union-attr]
            return
        if node.kind == "ident":
            found[node.name] = None
        for child in node.children():
            walk(child)
    walk(cel.checked.tree(program.serialize()))
    return {name: None if paths is None else _outermost(paths) for name, paths in found.items()}


def _outermost(paths: set[tuple[str, ...]]) -> tuple[tuple[str, ...], ...]:
    """``paths`` without those under another (a path taken whole has them already)."""
    kept: list[tuple[str, ...]] = []
    for path in sorted(paths, key=len):
        if not any(path[:len(k)] == k for k in kept):
            kept.append(path)
    return tuple(kept)


def _pruned(value: Any, paths: tuple[tuple[str, ...], ...]) -> Any:
    """``value`` with only what ``paths`` reach (each path's whole value, or as far as it exists)."""
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for path in paths:  # none under another: nothing is written into a value taken whole
        source, target = value, out
        for i, key in enumerate(path):
            if not isinstance(source, dict) or key not in source:
                break
            if i == len(path) - 1 or not isinstance(source[key], dict):
                target[key] = source[key]
                break
            target = target.setdefault(key, {})
            if not isinstance(target, dict):
                break
            source = source[key]
    return out


def references(program: Any, name: str) -> bool:
    """Whether a compiled expression reads the variable ``name`` anywhere."""
    return name in reads(program)
