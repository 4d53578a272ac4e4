"""The admission checks of certificates.k8s.io (``plugin/pkg/admission/certificates``), each a
validating plugin that asks the server's authorizers:

- **CertificateApproval**: a write to ``/approval`` needs ``approve`` on the request's signer;
- **CertificateSigning**: a ``/status`` write changing the certificate needs ``sign`` on it;
- **CertificateSubjectRestriction**: no request to the kube-apiserver-client signer may name the
  ``system:masters`` group (which would let its holder do anything).

A signer is the resource ``signers`` of the group, named by ``signerName``; a grant on
``<domain>/*`` covers every signer of that domain, as ``IsAuthorizedForSignerName`` checks."""

from __future__ import annotations

from kplane.api import AdmissionRequest, Attributes, Authorizers, Operation, UserInfo, deny
from kplane.plugins.certificates import requests
from kplane.plugins.certificates.types import GROUP

MASTERS = "system:masters"


async def authorized_for_signer(authorizers: Authorizers, who: UserInfo, verb: str, signer_name: str) -> bool:
    """``IsAuthorizedForSignerName``: the signer itself, then its domain's wildcard."""
    for name in (signer_name, signer_name.split("/")[0] + "/*"):
        attributes = Attributes(who, verb, True, api_group=GROUP, api_version="*", resource="signers", name=name)
        if (await authorizers.authorize(attributes)).allowed:
            return True
    return False


def _is_csr(request: AdmissionRequest) -> bool:
    return request.resource.group == GROUP and request.resource.plural == "certificatesigningrequests"


class CertificateApproval:
    def __init__(self, authorizers: Authorizers) -> None:
        self.authorizers = authorizers

    async def __call__(self, request: AdmissionRequest) -> None:
        if not _is_csr(request) or request.subresource != "approval" or request.operation is not Operation.UPDATE:
            return
        signer = request.obj.spec.signer_name
        if not await authorized_for_signer(self.authorizers, request.ctx.user, "approve", signer):
            raise deny(request, f'user not permitted to approve requests with signerName "{signer}"')


class CertificateSigning:
    def __init__(self, authorizers: Authorizers) -> None:
        self.authorizers = authorizers

    async def __call__(self, request: AdmissionRequest) -> None:
        if not _is_csr(request) or request.subresource != "status" or request.operation is not Operation.UPDATE:
            return
        if (request.obj.status.certificate or "") == (request.old.status.certificate or ""):
            return
        signer = request.obj.spec.signer_name
        if not await authorized_for_signer(self.authorizers, request.ctx.user, "sign", signer):
            raise deny(request, f'user not permitted to sign requests with signerName "{signer}"')


def subject_restriction(request: AdmissionRequest) -> None:
    """CertificateSubjectRestriction."""
    if not _is_csr(request) or request.subresource or request.operation is not Operation.CREATE:
        return
    signer = request.obj.spec.signer_name
    if signer != requests.KUBE_APISERVER_CLIENT:
        return
    try:
        csr = requests.parse_csr(requests.decoded(request.obj.spec.request))
    except (requests.RequestError, ValueError) as err:
        raise deny(request, f"failed to parse CSR: {err}") from None
    if MASTERS in requests.subject(csr)[1]:
        raise deny(request, f"use of {signer} signer with {MASTERS} group is not allowed")
