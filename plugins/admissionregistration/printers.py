"""Table columns of the admissionregistration kinds, as kube's printers have them
(``printValidatingWebhook``, ``printValidatingAdmissionPolicy``, ``...Binding``, ...)."""

from __future__ import annotations

from typing import Any

from kplane.api import AGE, NAME, Column, dig, format_label_selector


def _param_kind(obj: dict[str, Any]) -> str:
    kind = dig(obj, "spec.paramKind")
    return "<unset>" if kind is None else f"{kind.get('apiVersion', '')}/{kind.get('kind', '')}"


def _param_ref(obj: dict[str, Any]) -> str:
    """``namespace/name``, ``*/name`` when the binding does not say the namespace, or the selector."""
    ref = dig(obj, "spec.paramRef")
    if ref is None:
        return "<unset>"
    if ref.get("name"):
        return f"{ref.get('namespace') or '*'}/{ref['name']}"
    if ref.get("selector") is not None:
        return format_label_selector(ref["selector"])
    return "<unset>"


def _count(path: str):  # type: ignore[no-untyped-def]
    return lambda obj: len(dig(obj, path) or ())


_WEBHOOKS = Column("Webhooks", "integer", _count("webhooks"),
                   description="Webhooks indicates the number of webhooks registered in this configuration.")
_PARAM_KIND = Column("ParamKind", "string", _param_kind, description="ParamKind specifies the kind of resources used to "
                     "parameterize this policy")
_POLICY_NAME = Column("PolicyName", "string", lambda o: dig(o, "spec.policyName", ""),
                      description="PolicyName indicates the policy definition which the policy binding binded to.")
_PARAM_REF = Column("ParamRef", "string", _param_ref, description="ParamRef indicates the param resource which sets the "
                    "configration param")

WEBHOOK_CONFIGURATION_COLUMNS = (NAME, _WEBHOOKS, AGE)
VALIDATING_POLICY_COLUMNS = (
    NAME,
    Column("Validations", "integer", _count("spec.validations"),
           description="Validations indicates the number of validation rules defined in this configuration"),
    _PARAM_KIND,
    AGE,
)
MUTATING_POLICY_COLUMNS = (
    NAME,
    Column("Mutations", "integer", _count("spec.mutations"),
           description="Mutation indicates the number of mutations rules defined in this configuration"),
    _PARAM_KIND,
    AGE,
)
BINDING_COLUMNS = (NAME, _POLICY_NAME, _PARAM_REF, AGE)
