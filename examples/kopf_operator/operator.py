"""A small kopf operator: ConfigMaps labelled ``greet: "yes"`` get a greeting.

Run against any kplane server: ``KUBECONFIG=.kplane/kubeconfig kopf run --standalone operator.py``.
Its test, ``tests/test_kopf_operator.py``, runs it against the ``kplane`` pytest fixture.
"""

import kopf


@kopf.on.login()
def login(**kwargs):  # type: ignore[no-untyped-def]
    """Read $KUBECONFIG when kopf logs in (the official client's loader fixes the path at import)."""
    return kopf.login_with_kubeconfig(**kwargs)


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: object) -> None:
    settings.watching.server_timeout = 10  # notice a stopped server quickly


@kopf.on.create("v1", "configmaps", labels={"greet": "yes"})
def greet(name: str, patch: kopf.Patch, **_: object) -> None:
    patch.setdefault("data", {})["greeting"] = f"hello {name}"


@kopf.on.update("v1", "configmaps", labels={"greet": "yes"}, field="data.name")
def greet_by_name(new: str | None, patch: kopf.Patch, **_: object) -> None:
    patch.setdefault("data", {})["greeting"] = f"hello {new}"
