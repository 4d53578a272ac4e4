"""Table columns of RuntimeClass, as ``kubectl get runtimeclasses`` shows them on a cluster."""

from __future__ import annotations

from kplane.api import AGE, NAME, Column

RUNTIME_CLASS_COLUMNS = (
    NAME,
    Column("Handler", "string", lambda o: o.get("handler", ""), description="Handler specifies the underlying runtime and configuration that the CRI implementation will use to handle pods of this class."),
    AGE,
)
