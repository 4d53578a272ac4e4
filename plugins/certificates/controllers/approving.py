"""csrapproving (``pkg/controller/certificates/approver/sarapprove.go``): kubelets' client
certificates approved on their own.

A pending request to ``kube-apiserver-client-kubelet`` that is a valid kubelet client request
(O ``system:nodes``, CN ``system:node:<name>``, no alternative names, the kubelet's usages) is
approved when its requester may ``create`` ``certificatesigningrequests/selfnodeclient`` (a
node renewing its own certificate: the requester is the CN) or ``.../nodeclient`` (a
bootstrapper asking for any node), as a SubjectAccessReview of the requester's identity says."""

from __future__ import annotations

import base64
import copy
import logging

from kplane.api import ApiError, RESTClient, SharedInformerFactory, clock
from kplane.plugins.certificates import requests
from kplane.plugins.certificates.controllers.base import CertificateController, Obj, has_true, requests_of
from kplane.plugins.certificates.types import APPROVED, DENIED, GROUP

log = logging.getLogger(__name__)

#: (subresource, whether the requester must be the node itself, the approval's message), tried in order.
RECOGNIZERS = (
    ("selfnodeclient", True, "Auto approving self kubelet client certificate after SubjectAccessReview."),
    ("nodeclient", False, "Auto approving kubelet client certificate after SubjectAccessReview."),
)


class CSRApproving:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory) -> None:
        self.client = client
        self.controller = CertificateController("csrapproving", informers, self.handle)

    async def run(self) -> None:
        await self.controller.run()

    async def handle(self, csr: Obj) -> None:
        spec = csr.get("spec") or {}
        if (csr.get("status") or {}).get("certificate") or has_true(csr, APPROVED) or has_true(csr, DENIED):
            return
        try:
            request = requests.parse_csr(base64.b64decode(spec.get("request") or ""))
        except requests.RequestError as err:
            raise ValueError(f"unable to parse csr {csr['metadata']['name']!r}: {err}") from None
        if spec.get("signerName") != requests.KUBE_APISERVER_CLIENT_KUBELET:
            return
        try:
            requests.validate_kubelet_client(request, set(spec.get("usages") or []))
        except requests.RequestError:
            return
        tried = []
        for subresource, self_only, message in RECOGNIZERS:
            if self_only and spec.get("username") != requests.subject(request)[0]:
                continue
            tried.append(subresource)
            if await self._allowed(spec, subresource):
                await self._approve(csr, message)
                return
        log.debug("csrapproving: recognized csr %r as %s but subject access review was not approved",
                  csr["metadata"]["name"], tried)

    async def _allowed(self, spec: Obj, subresource: str) -> bool:
        review = {
            "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": spec.get("username", ""), "uid": spec.get("uid", ""), "groups": spec.get("groups") or [],
                     "extra": spec.get("extra") or {},
                     "resourceAttributes": {"group": GROUP, "resource": "certificatesigningrequests", "verb": "create",
                                            "subresource": subresource, "version": "*"}},
        }
        answer = await self.client.resource("authorization.k8s.io", "v1", "subjectaccessreviews").create(review)
        return bool((answer.get("status") or {}).get("allowed"))

    async def _approve(self, csr: Obj, message: str) -> None:
        csr = copy.deepcopy(csr)
        now = clock.now()
        csr.setdefault("status", {}).setdefault("conditions", []).append({
            "type": APPROVED, "status": "True", "reason": "AutoApproved", "message": message,
            "lastUpdateTime": now, "lastTransitionTime": now})
        try:
            await requests_of(self.client).update(csr, subresource="approval")
        except ApiError as err:
            if err.code != 404:
                raise
