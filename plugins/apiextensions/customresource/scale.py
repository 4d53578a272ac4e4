"""A custom resource's ``/scale`` (apiextensions-apiserver's ``ScaleREST``): autoscaling/v1 Scale
read from the paths a CRD version names.

Unlike a built-in kind's, the counts must be integers and the selector a string (read as is,
a ``labelSelectorPath`` names a string): another type is a 500 with unstructured's accessor
error, as kube-apiserver answers. A GET of an object without its spec count is a 500 ``the spec
replicas field ".spec.replicas" does not exist``; an update (``kubectl scale``) sets it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kplane.api import ScaleAdapter, errors
from kplane.plugins.apiextensions.customresource.strategy import ScalePaths, nested

_IDENTITY = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")


@dataclass(frozen=True, slots=True)
class CustomResourceScale(ScaleAdapter):
    paths: ScalePaths = ScalePaths("", "")

    @classmethod
    def of(cls, paths: ScalePaths) -> CustomResourceScale:
        return cls(spec_replicas=paths.spec_replicas.lstrip("."), status_replicas=paths.status_replicas.lstrip("."),
                   selector=paths.label_selector.lstrip("."), paths=paths)

    def scale_of(self, obj: dict[str, Any]) -> dict[str, Any]:
        try:
            spec = nested(obj, self.paths.spec_replicas, int)
            status = nested(obj, self.paths.status_replicas, int)
            selector = nested(obj, self.paths.label_selector, str) if self.paths.label_selector else None
        except TypeError as err:
            raise errors.internal_error(str(err)) from None
        meta = obj["metadata"]
        return {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {k: meta[k] for k in _IDENTITY if k in meta},
            "spec": {"replicas": spec or 0},
            "status": {"replicas": status or 0, **({"selector": selector} if selector else {})},
        }

    def get_scale(self, obj: dict[str, Any]) -> dict[str, Any]:
        scale = self.scale_of(obj)  # a count or selector of another type is that error first
        if not nested_present(obj, self.paths.spec_replicas):
            raise errors.internal_error(f'the spec replicas field "{self.paths.spec_replicas}" does not exist')
        return scale


def nested_present(obj: dict[str, Any], path: str) -> bool:
    value: Any = obj
    for part in path.lstrip(".").split("."):
        if not isinstance(value, dict) or part not in value:
            return False
        value = value[part]
    return True
