"""kubectl's everyday workflows, unmodified and with default validation, against `kplane serve`."""

from __future__ import annotations

import json
import time

import yaml

from tests.kubectl_cli import DEPLOYMENT, Kubectl


def deployment(name: str, replicas: int = 2, image: str = "nginx:1.25") -> str:
    return (DEPLOYMENT.replace("name: web", f"name: {name}", 1).replace("app: web", f"app: {name}")
            .replace("replicas: 2", f"replicas: {replicas}").replace("nginx:1.25", image))


def write(kubectl: Kubectl, name: str, text: str) -> str:
    path = kubectl.workdir / name
    path.write_text(text)
    return str(path)


def owned_configmap(name: str, owner: dict, block: bool = False) -> str:
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"]}
    if block:
        ref["blockOwnerDeletion"] = True
    return yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "ownerReferences": [ref]}, "data": {"k": "v"}})


def test_create_and_replace_with_default_validation(kubectl: Kubectl) -> None:
    path = write(kubectl, "v.yaml", deployment("validated"))
    assert kubectl.run("create", "-f", path).stdout.strip() == "deployment.apps/validated created"
    strict = deployment("typo").replace("replicas: 2", "replicas: 2\n  replicaz: 3")
    refused = kubectl.run("create", "-f", write(kubectl, "typo.yaml", strict), check=False)
    assert refused.returncode == 1 and 'unknown field "spec.replicaz"' in refused.stderr
    kubectl.run("rollout", "status", "deploy/validated", "--timeout=60s", timeout=90)  # replace sends the live resourceVersion
    assert kubectl.run("replace", "-f", write(kubectl, "v2.yaml", deployment("validated", replicas=3))).returncode == 0
    assert kubectl.json("get", "deploy", "validated")["spec"]["replicas"] == 3
    kubectl.run("delete", "deploy", "validated")


def test_client_side_apply_twice_sends_a_strategic_merge_patch(kubectl: Kubectl) -> None:
    path = write(kubectl, "a.yaml", deployment("applied"))
    assert kubectl.run("apply", "-f", path).stdout.strip() == "deployment.apps/applied created"
    path = write(kubectl, "a.yaml", deployment("applied", replicas=4, image="nginx:1.27"))
    assert kubectl.run("apply", "-f", path).stdout.strip() == "deployment.apps/applied configured"
    live = kubectl.json("get", "deploy", "applied")
    assert live["spec"]["replicas"] == 4 and live["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert "kubectl.kubernetes.io/last-applied-configuration" in live["metadata"]["annotations"]
    assert live["metadata"]["generation"] == 2
    kubectl.run("rollout", "status", "deploy/applied", "--timeout=60s", timeout=90)  # the controller stops writing
    settled = kubectl.json("get", "deploy", "applied")
    assert kubectl.run("apply", "-f", path).stdout.strip() == "deployment.apps/applied unchanged"
    same = kubectl.json("get", "deploy", "applied")
    assert same["metadata"]["resourceVersion"] == settled["metadata"]["resourceVersion"]
    kubectl.run("delete", "deploy", "applied")


def test_server_side_apply(kubectl: Kubectl) -> None:
    path = write(kubectl, "ssa.yaml", deployment("ssa"))
    assert kubectl.run("apply", "--server-side", "-f", path).stdout.strip() == "deployment.apps/ssa serverside-applied"
    live = kubectl.json("get", "deploy", "ssa", "--show-managed-fields")
    managers = {(m["manager"], m["operation"]) for m in live["metadata"]["managedFields"]}
    assert ("kubectl", "Apply") in managers
    kubectl.run("scale", "deploy", "ssa", "--replicas=5")
    conflict = kubectl.run("apply", "--server-side", "-f", write(kubectl, "ssa2.yaml", deployment("ssa", replicas=3)), check=False)
    assert conflict.returncode == 1 and "conflict" in conflict.stderr.lower() and ".spec.replicas" in conflict.stderr
    forced = kubectl.run("apply", "--server-side", "--force-conflicts", "-f", write(kubectl, "ssa2.yaml", deployment("ssa", replicas=3)))
    assert forced.returncode == 0 and kubectl.json("get", "deploy", "ssa")["spec"]["replicas"] == 3
    kubectl.run("delete", "deploy", "ssa")


def test_diff(kubectl: Kubectl) -> None:
    kubectl.run("apply", "-f", write(kubectl, "d.yaml", deployment("differ")))
    same = kubectl.run("diff", "-f", write(kubectl, "d.yaml", deployment("differ")), check=False)
    assert same.returncode == 0 and same.stdout == ""
    changed = kubectl.run("diff", "-f", write(kubectl, "d2.yaml", deployment("differ", replicas=7)), check=False)
    assert changed.returncode == 1 and "replicas: 7" in changed.stdout
    assert kubectl.json("get", "deploy", "differ")["spec"]["replicas"] == 2  # diff is a dry run
    kubectl.run("delete", "deploy", "differ")


def test_patch_types_label_annotate(kubectl: Kubectl) -> None:
    kubectl.run("create", "-f", write(kubectl, "p.yaml", deployment("patched")))
    kubectl.run("patch", "deploy", "patched", "-p", '{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.26"}]}}}}')
    kubectl.run("patch", "deploy", "patched", "--type=merge", "-p", '{"spec":{"paused":true}}')
    kubectl.run("patch", "deploy", "patched", "--type=json", "-p", '[{"op":"replace","path":"/spec/replicas","value":1}]')
    kubectl.run("label", "deploy", "patched", "tier=web")
    kubectl.run("annotate", "deploy", "patched", "owner=me")
    live = kubectl.json("get", "deploy", "patched")
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26"
    assert live["spec"]["paused"] is True and live["spec"]["replicas"] == 1
    assert live["metadata"]["labels"]["tier"] == "web" and live["metadata"]["annotations"]["owner"] == "me"
    kubectl.run("set", "image", "deploy/patched", "nginx=nginx:1.28")
    kubectl.run("rollout", "resume", "deploy/patched")
    live = kubectl.json("get", "deploy", "patched")
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.28" and "paused" not in live["spec"]
    bad = kubectl.run("patch", "deploy", "patched", "--type=json", "-p", '[{"op":"test","path":"/spec/replicas","value":9}]', check=False)
    assert bad.returncode == 1
    kubectl.run("delete", "deploy", "patched")


def test_edit(kubectl: Kubectl) -> None:
    kubectl.run("create", "-f", write(kubectl, "e.yaml", deployment("edited")))
    editor = kubectl.workdir / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/replicas: 2/replicas: 6/' \"$1\"\n")
    editor.chmod(0o755)
    env = {**kubectl.env, "KUBE_EDITOR": str(editor)}
    kubectl.run("rollout", "status", "deploy/edited", "--timeout=60s", timeout=90)  # edit may send the live resourceVersion
    edited = Kubectl(env, kubectl.workdir).run("edit", "deploy", "edited")
    assert edited.stdout.strip() == "deployment.apps/edited edited"
    assert kubectl.json("get", "deploy", "edited")["spec"]["replicas"] == 6
    kubectl.run("delete", "deploy", "edited")


def test_explain(kubectl: Kubectl) -> None:
    out = kubectl.run("explain", "deployment.spec.strategy").stdout
    assert "GROUP:      apps" in out and "KIND:       Deployment" in out
    assert "rollingUpdate" in out and "type" in out
    assert "DESCRIPTION:" in out
    pods = kubectl.run("explain", "pods.spec.containers").stdout
    assert "FIELD: containers <[]Container>" in pods and "image\t<string>" in pods


def test_delete_cascades_and_wait(kubectl: Kubectl) -> None:
    for mode in ("background", "foreground", "orphan"):
        name = f"cascade-{mode}"
        kubectl.run("create", "-f", write(kubectl, f"{name}.yaml", deployment(name)))
        owner = kubectl.json("get", "deploy", name)
        kubectl.run("create", "-f", write(kubectl, f"{name}-cm.yaml", owned_configmap(f"{name}-cm", owner, block=True)))
        deleted = kubectl.run("delete", "deploy", name, f"--cascade={mode}", timeout=60)
        assert deleted.stdout.strip() == f'deployment.apps "{name}" deleted'
        assert kubectl.run("get", "deploy", name, check=False).returncode == 1
        if mode == "orphan":
            kept = kubectl.json("get", "configmap", f"{name}-cm")
            assert "ownerReferences" not in kept["metadata"]
            kubectl.run("delete", "configmap", f"{name}-cm")
        else:
            kubectl.run("wait", "--for=delete", f"configmap/{name}-cm", "--timeout=20s")
    kubectl.run("create", "-f", write(kubectl, "w.yaml", deployment("waited")))
    started = time.monotonic()
    waiter = kubectl.run("delete", "deploy", "waited", "--wait=false")
    assert waiter.returncode == 0
    kubectl.run("wait", "--for=delete", "deploy/waited", "--timeout=20s")
    assert time.monotonic() - started < 20
    remaining = json.loads(kubectl.run("get", "deploy", "-o", "json").stdout)["items"]
    assert "waited" not in [d["metadata"]["name"] for d in remaining]
