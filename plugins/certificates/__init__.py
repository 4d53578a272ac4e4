"""The certificates.k8s.io API group at v1: CertificateSigningRequest, with its ``/status`` and
``/approval`` subresources; the CertificateApproval, CertificateSigning and
CertificateSubjectRestriction admission checks; and the certificate controllers: csrsigning
(the kubernetes.io signers, with the controller-manager's CA), csrapproving (kubelets' client
certificates) and csrcleaner.

Each function below is one of kplane's hooks (``core/hookspecs.py``), called once at start-up
in this order."""

from __future__ import annotations

from weakref import WeakKeyDictionary

from kplane.api import AdmissionChain, Authorizers, ControllerManager, Registry, Scheme, hookimpl
from kplane.plugins.certificates import admission, strategy, types
from kplane.plugins.certificates.controllers.approving import CSRApproving
from kplane.plugins.certificates.controllers.cleaner import CSRCleaner
from kplane.plugins.certificates.controllers.signing import CSRSigning
from kplane.plugins.certificates.v1 import protobuf, schemas as v1

GROUP = types.GROUP
RESOURCE = "certificatesigningrequests"
#: Each server's authorizers, from kplane_register_strategies, for the admission checks.
_authorizers: WeakKeyDictionary[Registry, Authorizers] = WeakKeyDictionary()


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    scheme.add_kind(group=GROUP, kind="CertificateSigningRequest", plural=RESOURCE,
                    internal=types.CertificateSigningRequest, versions={"v1": v1.CertificateSigningRequestSchema},
                    storage_version="v1", namespaced=False, short_names=["csr"], plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v1"])


@hookimpl
def kplane_register_conversions(scheme: Scheme) -> None:
    scheme.add_protobuf(GROUP, "v1", "CertificateSigningRequest", protobuf.CERTIFICATE_SIGNING_REQUEST)


@hookimpl
def kplane_register_strategies(registry: Registry, authorizers: Authorizers) -> None:
    registry.add_strategy(GROUP, RESOURCE, strategy.CertificateSigningRequestStrategy())
    registry.add_strategy(GROUP, RESOURCE, strategy.CertificateSigningRequestStatusStrategy(), subresource="status")
    registry.add_strategy(GROUP, RESOURCE, strategy.CertificateSigningRequestApprovalStrategy(), subresource="approval")
    _authorizers[registry] = authorizers


@hookimpl
def kplane_register_admission(chain: AdmissionChain, registry: Registry) -> None:
    authorizers = _authorizers.get(registry)
    if authorizers is not None:
        chain.add_validating("CertificateApproval", admission.CertificateApproval(authorizers))
        chain.add_validating("CertificateSigning", admission.CertificateSigning(authorizers))
    chain.add_validating("CertificateSubjectRestriction", admission.subject_restriction)


@hookimpl
def kplane_register_controllers(manager: ControllerManager) -> None:
    """kube-controller-manager's names, all acting as ``kube-system/certificate-controller``."""
    client = manager.client_for("certificate-controller")
    manager.add("csrsigning", CSRSigning(client, manager.informers, manager.signing))
    manager.add("csrapproving", CSRApproving(client, manager.informers))
    manager.add("csrcleaner", CSRCleaner(client, manager.informers))
