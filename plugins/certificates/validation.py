"""Validation of CertificateSigningRequests (``pkg/apis/certificates/validation``): the request
parses and is signed by its key, the signer's name, the usages, the expiration, the conditions,
the certificate's PEM; and on updates, which of those a write through the resource, ``/status``
or ``/approval`` may change. Problems already stored are tolerated on updates, as kube does."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from cryptography import x509

from kplane.api import FieldError, duplicate, forbidden, invalid, is_dns1123_label, is_dns1123_subdomain
from kplane.api import not_supported, required, too_long
from kplane.plugins.certificates import requests
from kplane.plugins.certificates.types import APPROVED, DENIED, FAILED, CertificateSigningRequest

TRUE_ONLY = frozenset({APPROVED, DENIED, FAILED})
STATUSES = ("False", "True", "Unknown")
DOMAIN_MAX, LABEL_MAX = 253, 63
SIGNER_NAME_MAX = DOMAIN_MAX + (DOMAIN_MAX + LABEL_MAX + 1) + 1


@dataclass(frozen=True, slots=True)
class Options:
    """``certificateValidationOptions``: what a write path may set, and what stored data excuses."""

    setting_approval: bool = False
    setting_certificate: bool = False
    both_approved_and_denied: bool = False
    legacy_signer: bool = False
    duplicate_condition_types: bool = False
    empty_condition_type: bool = False
    arbitrary_certificate: bool = False
    unknown_usages: bool = False
    duplicate_usages: bool = False


def certificate_problem(pem: bytes) -> str | None:
    """``validateCertificate``: only CERTIFICATE blocks without headers, each parsing; at least one."""
    if not pem:
        return None
    blocks = 0
    for block in requests.pem_blocks(pem):
        if block.type != "CERTIFICATE":
            return f'only CERTIFICATE PEM blocks are allowed, found "{block.type}"'
        if block.headers:
            return "no PEM block headers are permitted"
        try:
            x509.load_der_x509_certificate(block.der)
        except ValueError:
            return "x509: malformed certificate"
        blocks += 1
    return None if blocks else "must contain at least one CERTIFICATE PEM block"


def validate_signer_name(path: str, name: str) -> list[FieldError]:
    """``ValidateCertificateSigningRequestSignerName``: ``<fqdn>/<path>``, of bounded length."""
    if not name:
        return [required(path, "signerName must be provided")]
    segments = name.split("/")
    if len(segments) != 2:
        return [invalid(path, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")]
    domain, rest = segments
    errs: list[FieldError] = []
    if len(domain) > DOMAIN_MAX:
        errs.append(too_long(path, domain, DOMAIN_MAX))
    labels = domain.split(".")
    for label in labels:
        if problems := is_dns1123_label(label):
            errs.extend(invalid(path, domain, f'validating label "{label}": {p}') for p in problems)
            break
    if len(labels) < 2:
        errs.append(invalid(path, domain, "should be a domain with at least two segments separated by dots"))
    for label in rest.split("."):
        if problems := is_dns1123_subdomain(label):
            errs.extend(invalid(path, rest, f'validating label "{label}": {p}') for p in problems)
            break
    if len(name) > SIGNER_NAME_MAX:
        errs.append(too_long(path, name, SIGNER_NAME_MAX))
    return errs


def _request_problem(csr: CertificateSigningRequest) -> str | None:
    try:
        requests.check_signature(requests.parse_csr(requests.decoded(csr.spec.request)))
    except requests.RequestError as err:
        return str(err)
    return None


def _validate_conditions(csr: CertificateSigningRequest, opts: Options) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    approved = denied = False
    for i, c in enumerate(csr.status.conditions or []):
        at = f"status.conditions[{i}]"
        if not c.type and not opts.empty_condition_type:
            errs.append(required(f"{at}.type"))
        allowed = ("True",) if c.type in TRUE_ONLY else STATUSES
        if not c.status:
            errs.append(required(f"{at}.status"))
        elif c.status not in allowed:
            errs.append(not_supported(f"{at}.status", c.status, list(allowed)))
        if not opts.both_approved_and_denied:
            if c.type == APPROVED:
                approved = True
                if denied:
                    errs.append(invalid(f"{at}.type", c.type, "Approved and Denied conditions are mutually exclusive"))
            elif c.type == DENIED:
                denied = True
                if approved:
                    errs.append(invalid(f"{at}.type", c.type, "Approved and Denied conditions are mutually exclusive"))
        if not opts.duplicate_condition_types:
            if c.type in seen:
                errs.append(duplicate(f"{at}.type", c.type))
            seen.add(c.type)
    return errs


def validate(csr: CertificateSigningRequest, opts: Options = Options()) -> list[FieldError]:
    """``validateCertificateSigningRequest`` (the metadata is the Store's)."""
    spec = csr.spec
    errs: list[FieldError] = []
    if (problem := _request_problem(csr)) is not None:
        errs.append(invalid("spec.request", spec.request, problem))
    usages = spec.usages or []
    if not usages:
        errs.append(required("spec.usages", "usages must be provided"))
    if not opts.unknown_usages:
        errs.extend(not_supported(f"spec.usages[{i}]", u, sorted(requests.ALL_USAGES))
                    for i, u in enumerate(usages) if u not in requests.ALL_USAGES)
    if not opts.duplicate_usages:
        errs.extend(duplicate(f"spec.usages[{i}]", u) for i, u in enumerate(usages) if u in usages[:i])
    if not opts.legacy_signer and spec.signer_name == requests.LEGACY_UNKNOWN:
        errs.append(invalid("spec.signerName", spec.signer_name, "the legacy signerName is not allowed via this API version"))
    else:
        errs.extend(validate_signer_name("spec.signerName", spec.signer_name))
    if spec.expiration_seconds is not None and spec.expiration_seconds < 600:
        errs.append(invalid("spec.expirationSeconds", spec.expiration_seconds,
                            "may not specify a duration less than 600 seconds (10 minutes)"))
    errs.extend(_validate_conditions(csr, opts))
    if not opts.arbitrary_certificate and (problem := certificate_problem(requests.decoded(csr.status.certificate))):
        errs.append(invalid("status.certificate", "<certificate data>", problem))
    return errs


def _of_type(csr: CertificateSigningRequest, type_: str) -> list[object]:
    return [c for c in csr.status.conditions or [] if c.type == type_]


def options(new: CertificateSigningRequest, old: CertificateSigningRequest | None) -> Options:
    """``getValidationOptions``: what the stored object already gets away with."""
    if old is None:
        return Options()
    types = [c.type for c in old.status.conditions or []]
    usages = old.spec.usages or []
    return Options(
        both_approved_and_denied=APPROVED in types and DENIED in types,
        legacy_signer=old.spec.signer_name == requests.LEGACY_UNKNOWN,
        duplicate_condition_types=len(set(types)) != len(types),
        empty_condition_type="" in types,
        arbitrary_certificate=(new.status.certificate or "") == (old.status.certificate or "")
        or certificate_problem(requests.decoded(old.status.certificate)) is not None,
        unknown_usages=any(u not in requests.ALL_USAGES for u in usages),
        duplicate_usages=len(set(usages)) != len(usages),
    )


def validate_update(new: CertificateSigningRequest, old: CertificateSigningRequest, opts: Options) -> list[FieldError]:
    """``validateCertificateSigningRequestUpdate``: conditions are never removed; Approved and Denied
    change only through ``/approval``, the certificate only through ``/status`` and only once."""
    errs = validate(new, opts)
    for type_ in (APPROVED, DENIED, FAILED):
        if len(_of_type(new, type_)) < len(_of_type(old, type_)):
            errs.append(forbidden("status.conditions", f'updates may not remove a condition of type "{type_}"'))
    if not opts.setting_approval:
        for type_ in (APPROVED, DENIED):
            before, after = _of_type(old, type_), _of_type(new, type_)
            if len(after) > len(before):
                errs.append(forbidden("status.conditions", f'updates may not add a condition of type "{type_}"'))
            elif len(after) == len(before) and after != before:
                errs.append(forbidden("status.conditions", f'updates may not modify a condition of type "{type_}"'))
    if (new.status.certificate or "") != (old.status.certificate or ""):
        if not opts.setting_certificate:
            errs.append(forbidden("status.certificate", "updates may not set certificate content"))
        elif old.status.certificate:
            errs.append(forbidden("status.certificate", "updates may not modify existing certificate content"))
    return errs


def for_status(new: CertificateSigningRequest, old: CertificateSigningRequest) -> list[FieldError]:
    return validate_update(new, old, dataclasses.replace(options(new, old), setting_certificate=True))


def for_approval(new: CertificateSigningRequest, old: CertificateSigningRequest) -> list[FieldError]:
    return validate_update(new, old, dataclasses.replace(options(new, old), setting_approval=True))
