"""The Warning a deprecated CRD version answers every request with (``deprecationWarning``, or
apiextensions-apiserver's ``defaultDeprecationWarning``)."""

from __future__ import annotations

import functools
import re
from typing import Any

_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")
_LEVELS = {"alpha": 1, "beta": 2, None: 3}


def compare_versions(a: str, b: str) -> int:
    """``version.CompareKubeAwareVersionStrings``: > 0 when ``a`` ranks before ``b`` (v2 > v1 >
    v1beta2 > v1beta1 > v1alpha1 > names of another form, those in string order)."""
    ma, mb = _KUBE_VERSION.match(a), _KUBE_VERSION.match(b)
    if ma is None or mb is None:
        if ma is not None or mb is not None:
            return 1 if ma is not None else -1
        return (a < b) - (a > b)
    ka = (_LEVELS[ma.group(2)], int(ma.group(1)), int(ma.group(3) or 0))
    kb = (_LEVELS[mb.group(2)], int(mb.group(1)), int(mb.group(3) or 0))
    return (ka > kb) - (ka < kb)


def warnings(spec: dict[str, Any], version: dict[str, Any]) -> tuple[str, ...]:
    """The Warning headers of requests to ``version`` of the CRD ``spec``; none unless deprecated."""
    if not version.get("deprecated"):
        return ()
    if version.get("deprecationWarning") is not None:
        return (version["deprecationWarning"],)
    group, name, kind = spec["group"], version["name"], (spec.get("names") or {}).get("kind", "")
    message = f"{group}/{name} {kind} is deprecated"
    newer = [v["name"] for v in spec.get("versions") or []
             if v.get("served") and not v.get("deprecated") and compare_versions(name, v["name"]) < 0]
    if newer:
        best = sorted(newer, key=functools.cmp_to_key(compare_versions), reverse=True)[0]
        message += f"; use {group}/{best} {kind}"
    return (message,)
