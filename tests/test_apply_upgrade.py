"""From client-side to server-side apply: ``kubectl apply --server-side`` (manager ``kubectl``)
takes over the fields ``kubectl apply`` set, as kube-apiserver's lastAppliedManager allows, and
keeps the last-applied annotation current (lastAppliedUpdater); any other manager conflicts."""

from __future__ import annotations

import json
from typing import Any

import yaml

from tests.builders import DEPLOYMENTS, deployment
from tests.kubectl_cli import DEPLOYMENT, Kubectl

APPLY = "application/apply-patch+yaml"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
EDITED = DEPLOYMENT.replace("replicas: 2", "replicas: 3").replace("nginx:1.25", "nginx:1.26")


def write(kubectl: Kubectl, name: str, text: str) -> str:
    path = kubectl.workdir / name
    path.write_text(text)
    return str(path)


def entry(obj: dict[str, Any], manager: str) -> dict[str, Any] | None:
    found = [m for m in obj["metadata"]["managedFields"] if m["manager"] == manager]
    assert len(found) <= 1, found
    return found[0] if found else None


def test_kubectl_moves_from_client_side_to_server_side_apply(kubectl: Kubectl) -> None:
    kubectl.run("apply", "-f", write(kubectl, "web.yaml", DEPLOYMENT))
    edited = write(kubectl, "web-edited.yaml", EDITED)

    refused = kubectl.run("apply", "--server-side", "--field-manager=other", "-f", edited, check=False)
    assert refused.returncode == 1
    assert 'conflicts with "kubectl-client-side-apply" using apps/v1:\n- .spec.replicas\n' in refused.stderr

    diff = kubectl.run("diff", "--server-side", "-f", edited, check=False)
    assert diff.returncode == 1, diff.stderr
    assert "-  replicas: 2\n+  replicas: 3\n" in diff.stdout and "+      - image: nginx:1.26\n" in diff.stdout
    assert kubectl.json("get", "deploy", "web")["spec"]["replicas"] == 2  # a dry run

    assert kubectl.run("apply", "--server-side", "-f", edited).stdout.strip() == "deployment.apps/web serverside-applied"
    live = kubectl.json("get", "deploy", "web", "--show-managed-fields")
    assert live["spec"]["replicas"] == 3
    last = live["metadata"]["annotations"][LAST_APPLIED]
    assert last.endswith("}\n") and json.loads(last) == {**yaml.safe_load(EDITED), "metadata": {
        "name": "web", "namespace": "default", "labels": {"app": "web"}}}
    # kubectl then folds its client-side entry into its apply entry (csaupgrade), the annotation into its own
    applier = entry(live, "kubectl")
    assert applier is not None and applier["operation"] == "Apply"
    assert applier["fieldsV1"]["f:spec"]["f:replicas"] == {}
    assert entry(live, "kubectl-client-side-apply") is None
    annotation_owner = entry(live, "kubectl-last-applied")
    assert annotation_owner is not None
    assert annotation_owner["fieldsV1"] == {"f:metadata": {"f:annotations": {f"f:{LAST_APPLIED}": {}}}}

    # and back: a client-side apply works from the annotation server-side apply kept current
    kubectl.run("apply", "-f", write(kubectl, "web-4.yaml", EDITED.replace("replicas: 3", "replicas: 4")))
    assert kubectl.json("get", "deploy", "web")["spec"]["replicas"] == 4
    kubectl.run("delete", "deploy", "web")


async def test_the_server_hands_client_side_applied_fields_to_kubectl_only(api) -> None:
    """The server's part alone, without kubectl's managedFields migration."""
    body = deployment()
    body["metadata"]["annotations"] = {LAST_APPLIED: json.dumps(deployment(), separators=(",", ":"), sort_keys=True) + "\n"}
    created = await api.post(DEPLOYMENTS, body, params={"fieldManager": "kubectl-client-side-apply"})
    assert created.status == 201, created
    config = deployment(replicas=3)
    raw = yaml.safe_dump(config).encode()

    other = await api.request("PATCH", f"{DEPLOYMENTS}/web", raw=raw, content_type=APPLY, params={"fieldManager": "other"})
    assert other.status == 409
    assert other.body["message"] == (
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas')

    taken = await api.request("PATCH", f"{DEPLOYMENTS}/web", raw=raw, content_type=APPLY, params={"fieldManager": "kubectl"})
    assert taken.status == 200, taken
    assert taken.body["spec"]["replicas"] == 3
    assert "f:replicas" not in entry(taken.body, "kubectl-client-side-apply")["fieldsV1"]["f:spec"]
    assert entry(taken.body, "kubectl")["fieldsV1"]["f:spec"]["f:replicas"] == {}
    assert json.loads(taken.body["metadata"]["annotations"][LAST_APPLIED]) == config

    stale = deployment(replicas=5)  # the annotation no longer matches live: replicas is not kubectl's to take
    stale["metadata"]["annotations"] = {LAST_APPLIED: json.dumps(deployment(replicas=9)) + "\n"}
    put = await api.put(f"{DEPLOYMENTS}/web", {**stale, "metadata": {**taken.body["metadata"], **stale["metadata"]}},
                        params={"fieldManager": "kubectl-client-side-apply"})
    assert put.status == 200, put
    refused = await api.request("PATCH", f"{DEPLOYMENTS}/web", raw=raw, content_type=APPLY, params={"fieldManager": "kubectl"})
    assert refused.status == 409 and refused.body["details"]["causes"][0]["field"] == ".spec.replicas"
