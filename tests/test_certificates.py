"""certificates.k8s.io: CertificateSigningRequests through real HTTPS, the real kubectl and the
Python client, against a `kplane serve` whose controllers sign with its own CA; an issued client
certificate then authenticates to that server as the user it names."""

from __future__ import annotations

import base64
import datetime
import json
import os
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tests.kubectl_cli import Kubectl
from tests.servers import serving
from tests.waiting import wait_until

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client, config  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"
KUBELET_SIGNER = "kubernetes.io/kube-apiserver-client-kubelet"
CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
EXAMPLE_APPROVER = """
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: example-approver}
rules:
- {apiGroups: [certificates.k8s.io], resources: [signers], resourceNames: ["example.com/*"], verbs: [approve]}
"""


@dataclass
class Cluster:
    url: str
    kubeconfig: Path
    ca_pem: bytes
    admin: tuple[Path, Path]  # the admin's certificate and key files
    kubectl: Kubectl
    api: client.ApiClient
    workdir: Path

    def request(self, method: str, path: str, body: Any = None, *,
                identity: tuple[Path, Path] | None = None) -> tuple[int, dict[str, Any]]:
        """A JSON request over HTTPS as ``identity`` (a certificate and key; the admin by default)."""
        context = ssl.create_default_context(cadata=self.ca_pem.decode())
        context.load_cert_chain(*(identity or self.admin))
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, context=context, timeout=10) as reply:
                return reply.status, json.loads(reply.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    workdir = tmp_path_factory.mktemp("certificates")
    with serving(workdir / "data", secure=True) as served:
        kubeconfig = yaml.safe_load(served.kubeconfig.read_text())
        ca_pem = base64.b64decode(kubeconfig["clusters"][0]["cluster"]["certificate-authority-data"])
        user = kubeconfig["users"][0]["user"]
        admin = (workdir / "admin.crt", workdir / "admin.key")
        admin[0].write_bytes(base64.b64decode(user["client-certificate-data"]))
        admin[1].write_bytes(base64.b64decode(user["client-key-data"]))
        env = {"KUBECONFIG": str(served.kubeconfig), "KUBECACHEDIR": str(workdir / "cache"), "HOME": str(workdir),
               "PATH": os.environ["PATH"]}
        api = config.new_client_from_config(config_file=str(served.kubeconfig))
        yield Cluster(served.url, served.kubeconfig, ca_pem, admin, Kubectl(env, workdir), api, workdir)
        api.close()


def new_request(common_name: str, organizations: tuple[str, ...] = (), dns: tuple[str, ...] = ()) -> tuple[ec.EllipticCurvePrivateKey, str]:
    """A new key and a PEM PKCS#10 request for it, base64 as spec.request carries it."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([*(x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    builder = x509.CertificateSigningRequestBuilder().subject_name(name)
    if dns:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(d) for d in dns]), critical=False)
    pem = builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)
    return key, base64.b64encode(pem).decode()


def csr_body(name: str, request: str, *, signer: str = CLIENT_SIGNER, usages: list[str] | None = None,
             expiration: int | None = None, **status: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"request": request, "signerName": signer, "usages": usages or ["client auth"]}
    if expiration is not None:
        spec["expirationSeconds"] = expiration
    body: dict[str, Any] = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                            "metadata": {"name": name}, "spec": spec}
    if status:
        body["status"] = status
    return body


def issued(cluster: Cluster, name: str) -> x509.Certificate:
    def certificate() -> bytes | None:
        _, csr = cluster.request("GET", f"{CSRS}/{name}")
        return base64.b64decode(csr["status"]["certificate"]) if (csr.get("status") or {}).get("certificate") else None
    return x509.load_pem_x509_certificate(wait_until(certificate, 15, what=f"the certificate of {name}"))


def write_identity(cluster: Cluster, name: str, key: ec.EllipticCurvePrivateKey, cert: x509.Certificate) -> tuple[Path, Path]:
    files = (cluster.workdir / f"{name}.crt", cluster.workdir / f"{name}.key")
    files[0].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    files[1].write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return files


def test_issued_client_certificate_authenticates_as_its_subject(cluster: Cluster) -> None:
    """The proof: a key and CSR made here, created with the Python client, approved with
    kubectl, signed by the server's CA; the certificate then logs in as CN/O."""
    certificates = client.CertificatesV1Api(cluster.api)
    key, request = new_request("jane", ("devs", "ops"))
    created = certificates.create_certificate_signing_request(client.V1CertificateSigningRequest(
        metadata=client.V1ObjectMeta(name="jane"),
        spec=client.V1CertificateSigningRequestSpec(request=request, signer_name=CLIENT_SIGNER,
                                                    usages=["client auth"], expiration_seconds=7200)))
    assert created.spec.username == "kplane-admin"  # who asked, written by the server
    assert "system:masters" in created.spec.groups and "system:authenticated" in created.spec.groups
    assert not created.status.conditions and not created.status.certificate

    row = cluster.kubectl.run("get", "csr", "jane", "--no-headers").stdout.split()
    assert row[0] == "jane" and row[2:] == [CLIENT_SIGNER, "kplane-admin", "120m", "Pending"]
    assert cluster.kubectl.run("certificate", "approve", "jane").stdout.strip() == \
        "certificatesigningrequest.certificates.k8s.io/jane approved"

    cert = issued(cluster, "jane")
    ca = x509.load_pem_x509_certificate(cluster.ca_pem)
    cert.verify_directly_issued_by(ca)
    assert cert.subject == x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "devs"),
                                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "ops"),
                                      x509.NameAttribute(NameOID.COMMON_NAME, "jane")])
    assert cert.not_valid_after_utc - cert.not_valid_before_utc == datetime.timedelta(hours=2)
    assert cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value == \
        x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH])
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    approved = certificates.read_certificate_signing_request("jane")
    assert [(c.type, c.status, c.reason) for c in approved.status.conditions] == [("Approved", "True", "KubectlApprove")]
    assert cluster.kubectl.run("get", "csr", "jane", "--no-headers").stdout.split()[-1] == "Approved,Issued"

    # The certificate logs in over HTTPS, through the Python client and through kubectl.
    crt, key_file = write_identity(cluster, "jane", key, cert)
    settings = client.Configuration()
    settings.host, settings.cert_file, settings.key_file = cluster.url, str(crt), str(key_file)
    settings.ssl_ca_cert = str(cluster.workdir / "ca.crt")
    Path(settings.ssl_ca_cert).write_bytes(cluster.ca_pem)
    with client.ApiClient(settings) as as_jane:
        review = client.AuthenticationV1Api(as_jane).create_self_subject_review(client.V1SelfSubjectReview())
        assert review.status.user_info.username == "jane"
        assert review.status.user_info.groups == ["devs", "ops", "system:authenticated"]
        with pytest.raises(ApiException) as refused:  # authenticated, but granted nothing
            client.CoreV1Api(as_jane).list_namespaced_pod("default")
        assert refused.value.status == 403
    kubeconfig = yaml.safe_load(cluster.kubeconfig.read_text())
    kubeconfig["users"][0]["user"] = {"client-certificate": str(crt), "client-key": str(key_file)}
    (cluster.workdir / "jane.kubeconfig").write_text(yaml.safe_dump(kubeconfig))
    whoami = cluster.kubectl.run("--kubeconfig", str(cluster.workdir / "jane.kubeconfig"), "auth", "whoami", "-o", "json")
    assert json.loads(whoami.stdout)["status"]["userInfo"]["username"] == "jane"


def test_deny_and_describe(cluster: Cluster) -> None:
    _, request = new_request("bob")
    assert cluster.request("POST", CSRS, csr_body("bob", request))[0] == 201
    assert "denied" in cluster.kubectl.run("certificate", "deny", "bob").stdout
    csr = cluster.kubectl.json("get", "csr", "bob")
    assert [(c["type"], c["reason"]) for c in csr["status"]["conditions"]] == [("Denied", "KubectlDeny")]
    assert "certificate" not in csr["status"]
    assert cluster.kubectl.run("get", "csr", "bob", "--no-headers").stdout.split()[-1] == "Denied"
    described = cluster.kubectl.run("describe", "csr", "bob").stdout
    assert "Requesting User:    kplane-admin" in described and "Status:             Denied" in described
    assert "Common Name:    bob" in described
    listed = cluster.kubectl.run("get", "csr", "--field-selector", f"spec.signerName={CLIENT_SIGNER}", "-o", "name").stdout
    assert "certificatesigningrequest.certificates.k8s.io/bob" in listed.split()
    assert not cluster.kubectl.run("get", "csr", "--field-selector", "spec.signerName=example.com/x", "-o", "name").stdout.strip()


@pytest.mark.parametrize(("change", "message"), [
    ({"request": base64.b64encode(b"not a request").decode()}, "spec.request: Invalid value: "),
    ({"expirationSeconds": 599}, "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)"),
    ({"signerName": "kubernetes.io/legacy-unknown"}, "the legacy signerName is not allowed via this API version"),
    ({"signerName": "nodomain"}, "must be a fully qualified domain and path of the form 'example.com/signer-name'"),
    ({"usages": ["client auth", "flying"]}, 'spec.usages[1]: Unsupported value: "flying"'),
    ({"usages": ["client auth", "client auth"]}, 'spec.usages[1]: Duplicate value: "client auth"'),
    ({"usages": []}, "spec.usages: Required value: usages must be provided"),
])
def test_validation(cluster: Cluster, change: dict[str, Any], message: str) -> None:
    _, request = new_request("carol")
    body = csr_body("carol", request)
    body["spec"].update(change)
    code, status = cluster.request("POST", CSRS, body)
    assert (code, status["reason"]) == (422, "Invalid") and message in status["message"], status
    assert cluster.request("GET", f"{CSRS}/carol")[0] == 404


def test_request_signed_by_another_key_is_refused(cluster: Cluster) -> None:
    _, request = new_request("dave")
    der = bytearray(x509.load_pem_x509_csr(base64.b64decode(request)).public_bytes(serialization.Encoding.DER))
    der[-1] ^= 1  # the signature no longer matches
    forged = base64.b64encode(b"-----BEGIN CERTIFICATE REQUEST-----\n" + base64.encodebytes(bytes(der))
                              + b"-----END CERTIFICATE REQUEST-----\n").decode()
    code, status = cluster.request("POST", CSRS, csr_body("dave", forged))
    assert code == 422 and "x509: ECDSA verification failure" in status["message"], status


def test_system_masters_never_from_the_client_signer(cluster: Cluster) -> None:
    _, request = new_request("mallory", ("system:masters",))
    code, status = cluster.request("POST", CSRS, csr_body("mallory", request))
    assert (code, status["reason"]) == (403, "Forbidden")
    assert status["message"] == ('certificatesigningrequests.certificates.k8s.io "mallory" is forbidden: use of '
                                 "kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed")


def test_the_write_paths_keep_to_their_fields(cluster: Cluster) -> None:
    _, request = new_request("erin")
    approval = {"type": "Approved", "status": "True", "reason": "Mine"}
    code, csr = cluster.request("POST", CSRS, csr_body("erin", request, signer="example.com/erin",
                                                       conditions=[approval], certificate="AAAA"))
    assert code == 201 and csr["status"] == {}  # nobody creates one pre-approved
    csr["spec"]["usages"] = ["server auth"]
    code, updated = cluster.request("PUT", f"{CSRS}/erin", csr)
    assert code == 200 and updated["spec"]["usages"] == ["client auth"]  # the resource keeps its spec

    csr = updated
    csr["status"] = {"conditions": [approval]}
    code, status = cluster.request("PUT", f"{CSRS}/erin/status", csr)
    assert code == 422 and 'updates may not add a condition of type "Approved"' in status["message"]

    code, approved = cluster.request("PUT", f"{CSRS}/erin/approval", csr)
    assert code == 200 and approved["status"]["conditions"][0]["lastUpdateTime"]
    both = {**approved, "status": {"conditions": [*approved["status"]["conditions"],
                                                  {"type": "Denied", "status": "True"}]}}
    code, status = cluster.request("PUT", f"{CSRS}/erin/approval", both)
    assert code == 422 and "Approved and Denied conditions are mutually exclusive" in status["message"]
    code, status = cluster.request("PUT", f"{CSRS}/erin/approval", {**approved, "status": {"conditions": []}})
    assert code == 422 and 'updates may not remove a condition of type "Approved"' in status["message"]

    # /status: the signer's certificate, once; the approval stays as stored.
    pem = x509.load_pem_x509_certificate(cluster.ca_pem).public_bytes(serialization.Encoding.PEM)
    signed = {**approved, "status": {**approved["status"], "certificate": base64.b64encode(pem).decode()}}
    code, written = cluster.request("PUT", f"{CSRS}/erin/status", signed)
    assert code == 200 and written["status"]["certificate"] and written["status"]["conditions"][0]["reason"] == "Mine"
    again = {**written, "status": {**written["status"], "certificate": base64.b64encode(pem + pem).decode()}}
    code, status = cluster.request("PUT", f"{CSRS}/erin/status", again)
    assert code == 422 and "updates may not modify existing certificate content" in status["message"]
    bad = {**approved, "status": {**approved["status"], "certificate": base64.b64encode(b"junk").decode()}}
    code, status = cluster.request("PUT", f"{CSRS}/erin/status", {**bad, "metadata": written["metadata"]})
    assert code == 422 and "status.certificate" in status["message"]


def test_signer_refuses_a_kubelet_certificate_that_names_no_node(cluster: Cluster) -> None:
    _, request = new_request("not-a-node", ("system:nodes",))
    body = csr_body("kubelet-bad", request, signer=KUBELET_SIGNER, usages=["digital signature", "client auth"])
    assert cluster.request("POST", CSRS, body)[0] == 201
    cluster.kubectl.run("certificate", "approve", "kubelet-bad")

    def failure() -> dict[str, Any] | None:
        conditions = cluster.request("GET", f"{CSRS}/kubelet-bad")[1]["status"].get("conditions") or []
        return next((c for c in conditions if c["type"] == "Failed"), None)
    condition = wait_until(failure, 15, what="the Failed condition")
    assert (condition["reason"], condition["message"]) == ("SignerValidationFailure",
                                                           "subject common name does not begin with system:node:")
    assert cluster.kubectl.run("get", "csr", "kubelet-bad", "--no-headers").stdout.split()[-1] == "Approved,Failed"


def test_kubelet_client_certificates_are_approved_and_issued_by_themselves(cluster: Cluster) -> None:
    """The requester (system:masters) may create certificatesigningrequests/nodeclient."""
    _, request = new_request("system:node:node-7", ("system:nodes",))
    body = csr_body("node-7", request, signer=KUBELET_SIGNER, usages=["digital signature", "client auth"])
    assert cluster.request("POST", CSRS, body)[0] == 201
    cert = issued(cluster, "node-7")
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "system:node:node-7"
    # No expirationSeconds: the signing duration, a year (less the five minutes' backdating).
    assert cert.not_valid_after_utc - cert.not_valid_before_utc == datetime.timedelta(days=365, minutes=5)
    condition = cluster.request("GET", f"{CSRS}/node-7")[1]["status"]["conditions"][0]
    assert (condition["type"], condition["reason"], condition["message"]) == (
        "Approved", "AutoApproved", "Auto approving kubelet client certificate after SubjectAccessReview.")


def test_approving_needs_approve_on_the_signer(cluster: Cluster) -> None:
    """A user allowed to write /approval but not to approve for the signer is refused by
    CertificateApproval; granting ``approve`` on ``<domain>/*`` lets them."""
    key, request = new_request("approver")
    assert cluster.request("POST", CSRS, csr_body("approver", request, expiration=3600))[0] == 201
    cluster.kubectl.run("certificate", "approve", "approver")
    approver = write_identity(cluster, "approver", key, issued(cluster, "approver"))
    cluster.kubectl.run("create", "clusterrole", "csr-approval", "--verb=get,update",
                        "--resource=certificatesigningrequests,certificatesigningrequests/approval")
    cluster.kubectl.run("create", "clusterrolebinding", "csr-approval", "--clusterrole=csr-approval", "--user=approver")
    _, request = new_request("frank")
    assert cluster.request("POST", CSRS, csr_body("frank", request, signer="example.com/frank"))[0] == 201

    def approve() -> tuple[int, dict[str, Any]]:
        _, csr = cluster.request("GET", f"{CSRS}/frank", identity=approver)
        csr["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "Checked"}]}
        return cluster.request("PUT", f"{CSRS}/frank/approval", csr, identity=approver)
    code, status = wait_until(lambda: (found := approve())[0] != 404 and found, 10, what="the role")  # RBAC's cache
    assert (code, status["message"]) == (403, 'certificatesigningrequests.certificates.k8s.io "frank" is forbidden: '
                                                'user not permitted to approve requests with signerName "example.com/frank"')
    cluster.kubectl.apply_file("apply", EXAMPLE_APPROVER)  # signers are no resource kubectl create knows
    cluster.kubectl.run("create", "clusterrolebinding", "example-approver", "--clusterrole=example-approver", "--user=approver")
    code, csr = wait_until(lambda: (found := approve())[0] == 200 and found, 10, what="the approve grant")
    assert csr["status"]["conditions"][0]["reason"] == "Checked"


def test_cleaner_deletes_requests_denied_over_an_hour_ago(cluster: Cluster) -> None:
    _, request = new_request("old")
    _, csr = cluster.request("POST", CSRS, csr_body("old", request))
    two_hours_ago = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    csr["status"] = {"conditions": [{"type": "Denied", "status": "True", "reason": "Old", "lastUpdateTime": two_hours_ago}]}
    assert cluster.request("PUT", f"{CSRS}/old/approval", csr)[0] == 200
    wait_until(lambda: cluster.request("GET", f"{CSRS}/old")[0] == 404, 15, what="the cleaner")
    assert cluster.request("GET", f"{CSRS}/bob")[0] == 200  # denied just now: kept for the hour


def test_a_hostile_request_is_refused_quickly(cluster: Cluster) -> None:
    """A megabyte of unmatched PEM markers: found in one pass, answered with a 422."""
    body = csr_body("hostile", base64.b64encode(b"-----BEGIN CERTIFICATE REQUEST-----\n" * 30000).decode())
    began = datetime.datetime.now()
    code, status = cluster.request("POST", CSRS, body)
    assert code == 422 and "PEM block type must be CERTIFICATE REQUEST" in status["message"]
    assert datetime.datetime.now() - began < datetime.timedelta(seconds=5)
