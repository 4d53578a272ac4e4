"""Table columns of roles and bindings, as kube-apiserver prints them (``pkg/printers/internalversion``)."""

from __future__ import annotations

from typing import Any

from kplane.api import AGE, NAME, Column, dig

CREATED_AT = Column("Created At", "date", lambda o: dig(o, "metadata.creationTimestamp", ""),
                    description="CreationTimestamp is a timestamp representing the server time when this object "
                                "was created.")

ROLE_COLUMNS = (NAME, CREATED_AT)


def _subjects(obj: dict[str, Any], kind: str) -> str:
    """``SubjectsStrings``: names of one kind, ServiceAccounts as ``namespace/name``, joined by ", "."""
    names = []
    for subject in obj.get("subjects") or ():
        if subject.get("kind") != kind:
            continue
        name = subject.get("name", "")
        names.append(f"{subject.get('namespace', '')}/{name}" if kind == "ServiceAccount" else name)
    return ", ".join(names)


def _role(obj: dict[str, Any]) -> str:
    return f"{dig(obj, 'roleRef.kind', '')}/{dig(obj, 'roleRef.name', '')}"


BINDING_COLUMNS = (
    NAME,
    Column("Role", "string", _role, description="RoleRef can reference a Role in the current namespace or a "
                                                 "ClusterRole in the global namespace."),
    AGE,
    Column("Users", "string", lambda o: _subjects(o, "User"), priority=1, description="Users in the roleBinding"),
    Column("Groups", "string", lambda o: _subjects(o, "Group"), priority=1, description="Groups in the roleBinding"),
    Column("ServiceAccounts", "string", lambda o: _subjects(o, "ServiceAccount"), priority=1,
           description="ServiceAccounts in the roleBinding"),
)
