"""managedFields of a minimal Deployment made by kubectl's three ways to create, as kube-apiserver
1.32 writes them: an Update (``kubectl create``, client-side ``kubectl apply``) owns every field of
the defaulted object, an Apply only its configuration.

Pod-level defaults come from the server's defaulting (they are not this test's point); the rest
is spelled out, with SMD's rules: ``selector`` is atomic (one leaf), ``containers`` and
``strategy`` exist in Go's empty Deployment (no ``.`` of their own), ``rollingUpdate`` is a pointer.
"""

from __future__ import annotations

from typing import Any

from tests.kubectl_cli import DEPLOYMENT, Kubectl

NGINX = 'k:{"name":"nginx"}'
PORT = 'k:{"containerPort":80,"protocol":"TCP"}'
LAST_APPLIED = "f:kubectl.kubernetes.io/last-applied-configuration"


def fields_of(kubectl: Kubectl, name: str, manager: str) -> tuple[dict[str, Any], dict[str, Any]]:
    live = kubectl.json("get", "deployment", name, "--show-managed-fields")
    (entry,) = [m for m in live["metadata"]["managedFields"] if m["manager"] == manager]
    return live, entry


def leaves(obj: dict[str, Any], *but: str) -> dict[str, Any]:
    return {f"f:{key}": {} for key in obj if key not in but}


def update_fields(live: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
    """What an Update that created ``live`` owns."""
    pod_spec = live["spec"]["template"]["spec"]
    (container,) = pod_spec["containers"]
    assert {"dnsPolicy", "restartPolicy", "schedulerName", "securityContext", "terminationGracePeriodSeconds"} <= set(pod_spec)
    assert {"imagePullPolicy", "resources", "terminationMessagePath", "terminationMessagePolicy"} <= set(container)
    return {
        "f:metadata": metadata,
        "f:spec": {
            "f:progressDeadlineSeconds": {},
            "f:replicas": {},
            "f:revisionHistoryLimit": {},
            "f:selector": {},
            "f:strategy": {"f:rollingUpdate": {".": {}, "f:maxSurge": {}, "f:maxUnavailable": {}}, "f:type": {}},
            "f:template": {
                "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {
                    "f:containers": {
                        NGINX: {
                            ".": {},
                            "f:ports": {".": {}, PORT: {".": {}, "f:containerPort": {}, "f:protocol": {}}},
                            **leaves(container, "ports"),
                        }
                    },
                    **leaves(pod_spec, "containers"),
                },
            },
        },
    }


def test_kubectl_create(kubectl: Kubectl) -> None:
    kubectl.apply_file("create", DEPLOYMENT.replace("name: web\n", "name: created\n", 1))
    live, entry = fields_of(kubectl, "created", "kubectl-create")
    assert (entry["operation"], entry["apiVersion"], entry.get("subresource")) == ("Update", "apps/v1", None)
    assert entry["fieldsV1"] == update_fields(live, {"f:labels": {".": {}, "f:app": {}}})
    kubectl.run("delete", "deployment", "created")


def test_kubectl_apply_client_side(kubectl: Kubectl) -> None:
    kubectl.apply_file("apply", DEPLOYMENT.replace("name: web\n", "name: csa\n", 1))
    live, entry = fields_of(kubectl, "csa", "kubectl-client-side-apply")
    assert entry["operation"] == "Update"
    metadata = {"f:annotations": {".": {}, LAST_APPLIED: {}}, "f:labels": {".": {}, "f:app": {}}}
    assert entry["fieldsV1"] == update_fields(live, metadata)
    kubectl.run("delete", "deployment", "csa")


def test_kubectl_apply_server_side(kubectl: Kubectl) -> None:
    kubectl.apply_file("apply", DEPLOYMENT.replace("name: web\n", "name: ssa\n", 1), "--server-side")
    live, entry = fields_of(kubectl, "ssa", "kubectl")
    assert (entry["operation"], entry["apiVersion"]) == ("Apply", "apps/v1")
    assert entry["fieldsV1"] == {
        "f:metadata": {"f:labels": {"f:app": {}}},
        "f:spec": {
            "f:replicas": {},
            "f:selector": {},
            "f:template": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:containers": {
                        NGINX: {".": {}, "f:image": {}, "f:name": {}, "f:ports": {PORT: {".": {}, "f:containerPort": {}}}}
                    }
                },
            },
        },
    }
    assert live["spec"]["progressDeadlineSeconds"] == 600  # defaulted after the apply, owned by nobody
    assert [m["manager"] for m in live["metadata"]["managedFields"] if m["manager"].startswith("kubectl")] == ["kubectl"]
    kubectl.run("delete", "deployment", "ssa")
