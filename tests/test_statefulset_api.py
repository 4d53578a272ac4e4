"""apps/v1 StatefulSet as an API object, over real HTTP: defaults, validation (kube's messages
and field paths), what an update may change, the status subresource's rules, /scale and the
table kubectl prints. The controller is off here: what is stored is what the requests made."""

from __future__ import annotations

import copy
from typing import Any

SETS = "/apis/apps/v1/namespaces/default/statefulsets"
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


def stateful_set(name: str = "db", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"serviceName": name, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "postgres:16",
                                                           "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}},
                     "volumeClaimTemplates": [{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
                                               "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
                     **spec}}


def causes(reply: Any) -> list[tuple[str, str, str]]:
    return [(c["reason"], c["field"], c["message"]) for c in reply.body["details"]["causes"]]


async def test_create_defaults_and_reads_back_as_kube_does(api) -> None:
    created = await api.post(SETS, stateful_set())
    assert created.status == 201, created
    spec = created.body["spec"]
    assert spec["replicas"] == 1 and spec["revisionHistoryLimit"] == 10 and spec["podManagementPolicy"] == "OrderedReady"
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    claim = spec["volumeClaimTemplates"][0]
    assert claim["apiVersion"] == "v1" and claim["spec"]["volumeMode"] == "Filesystem" and claim["status"] == {"phase": "Pending"}
    assert spec["template"]["spec"]["restartPolicy"] == "Always" and spec["template"]["spec"]["dnsPolicy"] == "ClusterFirst"
    assert created.body["status"] == {"replicas": 0, "availableReplicas": 0} and created.body["metadata"]["generation"] == 1
    on_delete = await api.post(SETS, stateful_set("od", updateStrategy={"type": "OnDelete"}))
    assert on_delete.body["spec"]["updateStrategy"] == {"type": "OnDelete"}

    table = await api.get(SETS, headers=TABLE)
    assert [c["name"] for c in table.body["columnDefinitions"]] == ["Name", "Ready", "Age", "Containers", "Images"]
    assert table.body["rows"][0]["cells"][:2] == ["db", "0/1"] and table.body["rows"][0]["cells"][3:] == ["c", "postgres:16"]

    scale = await api.patch(f"{SETS}/db/scale", {"spec": {"replicas": 4}})
    assert scale.status == 200 and scale.body["spec"]["replicas"] == 4 and scale.body["status"]["selector"] == "app=db"
    again = (await api.get(f"{SETS}/db")).body
    assert again["spec"]["replicas"] == 4 and again["metadata"]["generation"] == 2


async def test_invalid_specs_are_refused_with_kube_messages_and_nothing_stored(api) -> None:
    bad = stateful_set("bad", podManagementPolicy="Sometimes", replicas=-1, minReadySeconds=-2,
                       updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": -1, "maxUnavailable": 0}},
                       persistentVolumeClaimRetentionPolicy={"whenDeleted": "Keep"}, ordinals={"start": -3})
    bad["spec"]["template"]["spec"].update(restartPolicy="Never", activeDeadlineSeconds=5)
    reply = await api.post(SETS, bad)
    assert reply.status == 422 and reply.body["reason"] == "Invalid"
    assert set(causes(reply)) >= {
        ("FieldValueInvalid", "spec.podManagementPolicy", "Invalid value: \"Sometimes\": must be 'OrderedReady' or 'Parallel'"),
        ("FieldValueInvalid", "spec.replicas", "Invalid value: -1: must be greater than or equal to 0"),
        ("FieldValueInvalid", "spec.minReadySeconds", "Invalid value: -2: must be greater than or equal to 0"),
        ("FieldValueInvalid", "spec.ordinals.start", "Invalid value: -3: must be greater than or equal to 0"),
        ("FieldValueInvalid", "spec.updateStrategy.rollingUpdate.partition", "Invalid value: -1: must be greater than or equal to 0"),
        ("FieldValueInvalid", "spec.updateStrategy.rollingUpdate.maxUnavailable", "Invalid value: 0: cannot be 0"),
        ("FieldValueNotSupported", "spec.persistentVolumeClaimRetentionPolicy.whenDeleted", 'Unsupported value: "Keep": supported values: "Retain", "Delete"'),
        ("FieldValueNotSupported", "spec.template.spec.restartPolicy", 'Unsupported value: "Never": supported values: "Always"'),
        ("FieldValueForbidden", "spec.template.spec.activeDeadlineSeconds", "Forbidden: activeDeadlineSeconds in StatefulSet is not Supported"),
    }
    on_delete = await api.post(SETS, stateful_set("od", updateStrategy={"type": "OnDelete", "rollingUpdate": {"partition": 1}}))
    assert on_delete.status == 422 and "only allowed for updateStrategy 'RollingUpdate'" in on_delete.body["message"]
    mismatch = stateful_set("mm")
    mismatch["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    reply = await api.post(SETS, mismatch)
    assert reply.status == 422 and ("FieldValueInvalid", "spec.template.metadata.labels",
                                    'Invalid value: {"app":"other"}: `selector` does not match template `labels`') in causes(reply)
    dotted = await api.post(SETS, stateful_set("a.b"))  # names are DNS labels: they begin hostnames
    assert dotted.status == 422 and causes(dotted)[0][1] == "metadata.name"
    assert (await api.get(SETS)).body["items"] == []


async def test_updates_change_only_what_kube_allows(api) -> None:
    stored = (await api.post(SETS, stateful_set(replicas=2))).body
    changed = copy.deepcopy(stored)
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "postgres:17"
    changed["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 1
    changed["spec"]["persistentVolumeClaimRetentionPolicy"]["whenScaled"] = "Delete"
    changed["status"] = {"replicas": 9}
    updated = await api.put(f"{SETS}/db", changed)
    assert updated.status == 200 and updated.body["metadata"]["generation"] == 2 and updated.body["status"]["replicas"] == 0
    selector = {"selector": {"matchLabels": {"app": "x"}}, "template": {"metadata": {"labels": {"app": "x"}}}}
    for field, value in (("serviceName", "other"), ("podManagementPolicy", "Parallel"), ("volumeClaimTemplates", []), ("selector", selector)):
        reply = await api.patch(f"{SETS}/db", {"spec": selector if field == "selector" else {field: value}})
        assert reply.status == 422, field
        assert causes(reply) == [("FieldValueForbidden", "spec", "Forbidden: updates to statefulset spec for fields other than "
                                  "'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' "
                                  "and 'minReadySeconds' are forbidden")]

    status = {"replicas": 2, "readyReplicas": 2, "availableReplicas": 1, "currentReplicas": 2, "updatedReplicas": 0,
              "collisionCount": 1, "currentRevision": "db-1", "updateRevision": "db-2"}
    written = await api.patch(f"{SETS}/db/status", {"status": status, "spec": {"replicas": 7}})
    assert written.status == 200 and written.body["status"]["currentRevision"] == "db-1" and written.body["spec"]["replicas"] == 2
    over = await api.patch(f"{SETS}/db/status", {"status": {"readyReplicas": 3, "availableReplicas": 3}})
    assert over.status == 422 and set(causes(over)) == {
        ("FieldValueInvalid", "status.readyReplicas", "Invalid value: 3: cannot be greater than status.replicas"),
        ("FieldValueInvalid", "status.availableReplicas", "Invalid value: 3: cannot be greater than status.replicas"),
    }
    lowered = await api.patch(f"{SETS}/db/status", {"status": {"collisionCount": 0}})
    assert lowered.status == 422 and causes(lowered) == [("FieldValueInvalid", "status.collisionCount", "Invalid value: 0: cannot be decremented")]
