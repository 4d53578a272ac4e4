"""What the CRD tests share: a CustomResourceDefinition's body, and creating one and waiting
until its resource is served (Established, then routed: a matter of milliseconds)."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.conftest import Client

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def crd_body(group: str, plural: str, kind: str, schema: dict[str, Any] | None, *, scope: str = "Namespaced",
             **version: Any) -> dict[str, Any]:
    """A CRD of one version ``v1``, served and stored, whose ``openAPIV3Schema`` is ``schema``;
    ``version`` adds to that version (``additionalPrinterColumns=[...]``)."""
    served = {"name": "v1", "served": True, "storage": True, **version}
    if schema is not None:
        served["schema"] = {"openAPIV3Schema": schema}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {"group": group, "scope": scope,
                 "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": kind + "List"},
                 "versions": [served]},
    }


def collection(body: dict[str, Any], version: str = "", namespace: str = "default") -> str:
    """The URL of a CRD's objects (in its first served version unless ``version`` says)."""
    spec = body["spec"]
    version = version or next(v["name"] for v in spec["versions"] if v.get("served"))
    where = f"namespaces/{namespace}/" if spec["scope"] == "Namespaced" else ""
    return f"/apis/{spec['group']}/{version}/{where}{spec['names']['plural']}"


async def create_served(api: Client, body: dict[str, Any], path: str = "") -> str:
    """Create the CRD ``body`` and wait until ``path`` (default: its collection) answers 200."""
    created = await api.post(CRDS, body)
    assert created.status == 201, created
    path = path or collection(body)
    for _ in range(200):
        if (await api.get(path)).status == 200:
            return path
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path} not served")
