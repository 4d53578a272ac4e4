"""Table columns of CertificateSigningRequests, as ``kubectl get csr`` shows them
(``printCertificateSigningRequest``): the age second, the condition summed up last."""

from __future__ import annotations

from typing import Any

from kplane.api import AGE, NAME, Column, dig, human_duration


def condition(csr: dict[str, Any]) -> str:
    """``extractCSRStatus``: Denied, else Approved, else Pending; then Failed and Issued."""
    types = {c.get("type") for c in dig(csr, "status.conditions", []) or []}
    text = "Denied" if "Denied" in types else "Approved" if "Approved" in types else "Pending"
    if "Failed" in types:
        text += ",Failed"
    if dig(csr, "status.certificate"):
        text += ",Issued"
    return text


def _requested_duration(csr: dict[str, Any]) -> str:
    seconds = dig(csr, "spec.expirationSeconds")
    return "<none>" if seconds is None else human_duration(seconds)


CSR_COLUMNS = (
    NAME,
    AGE,
    Column("SignerName", "string", lambda o: dig(o, "spec.signerName") or "<none>",
           description="Requested signer for the request: a qualified name of the form <domain>/<path>."),
    Column("Requestor", "string", lambda o: dig(o, "spec.username", ""),
           description="The user who created the request, set by the server."),
    Column("RequestedDuration", "string", _requested_duration,
           description="expirationSeconds is the requested duration of validity of the issued certificate."),
    Column("Condition", "string", condition,
           description="Conditions applied to the request: Approved, Denied or Failed, and Issued once signed."),
)
