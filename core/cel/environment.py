"""The one CEL environment (``k8s.io/apiserver/pkg/cel/environment``): Kubernetes' libraries
and cel-go's extensions, with the variables a use declares.

A CRD rule declares ``self`` and ``oldSelf``; an admission expression ``object``, ``oldObject``,
``request``, ``params``, ``namespaceObject``, ``authorizer`` and ``variables``. Environments are
made once per set of declarations and shared (making one costs milliseconds).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_encoders, ext_math, ext_optional, ext_strings

from kplane.core.cel import checked, libraries, validators

T = cel.Type
_STATUS = re.compile(r"^[A-Z_]+: |\s*\[[A-Z_]+\]$")


def status_text(err: BaseException | str) -> str:
    """A CEL error without the status code the binding puts around it."""
    return _STATUS.sub("", str(err)).strip()


def type_of(sig: str) -> Any:
    """The CEL type a signature names: ``string``, ``int``, ``double``, ``bool``, ``dyn``,
    ``list(T)``, ``map(string, T)``."""
    if sig.startswith("map(string, "):
        return T.Map(T.STRING, type_of(sig[len("map(string, "):-1]))
    if sig.startswith("list("):
        return T.List(type_of(sig[len("list("):-1]))
    return {"string": T.STRING, "int": T.INT, "double": T.DOUBLE, "bool": T.BOOL}.get(sig, T.DYN)


@functools.lru_cache(maxsize=256)
def _cached(declarations: tuple[tuple[str, str], ...]) -> Any:
    return cel.NewEnv(variables={name: type_of(sig) for name, sig in declarations},
                      functions=libraries.functions(), extensions=[
                          ext_strings.ExtStrings(), ext_optional.ExtOptional(), ext_math.ExtMath(),
                          ext_encoders.ExtEncoders(), ext_bindings.ExtBindings()])


def new(variables: dict[str, str]) -> Any:
    """The environment declaring ``variables`` (name → signature, see :func:`type_of`)."""
    return _cached(tuple(sorted(variables.items())))


def compile(env: Any, source: str, constructions: frozenset[int] = frozenset()) -> Any:
    """``env.compile(source)`` (RuntimeError when refused, as also for what kube's validators
    refuse: :mod:`.validators`; its InstantiationError when kube could make no program of it),
    its calls of functions kplane runs itself pointed at them (:func:`.checked.with_own_calls`:
    ``matches``, ``find`` and ``findAll``, each constant pattern compiled once).
    ``constructions``: the offsets of map literals that stand for typed objects (see
    :func:`.validators.check`)."""
    program = env.compile(source)
    serialized = program.serialize()
    if any(name.encode() in serialized for name in checked.OWN_CALLS):
        program = env.deserialize(checked.with_own_calls(serialized))
        serialized = program.serialize()
    validators.check(env, source, serialized, constructions)
    return program


def activation(data: Mapping[str, Any]) -> Any:
    """``data`` (variable name → plain value) for many evaluations, of any environment's
    expressions: each value is converted to CEL once, when an expression first reads it, where
    ``eval(data=...)`` converts all it is given on every evaluation."""
    return _cached(()).Activation(dict(data))
