"""certificates.k8s.io: CertificateSigningRequests through real HTTPS, the real kubectl and the
Python client, against a `kplane serve` whose controllers sign with its own CA; an issued client
certificate then authenticates to that server as the user it names."""

from __future__ import annotations

import base64
import datetime
import json
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
               "PATH": __import__("os").environ["PATH"]}
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
