"""managedFields and server-side apply (kplane.core.managedfields) on the real Deployment schema."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from kplane.core.meta.errors import APIError, StatusReason
from kplane.core.meta.schemas import ObjectMetaSchema
from kplane.core.runtime import fields
from kplane.core.runtime.schema import Schema, shape_of
from kplane.core.managedfields.fieldmanager import (
    ApplyConflict,
    Conflict,
    apply,
    check_apply_body,
    conflict_error,
    default_manager,
    managed_fields_after_update,
)
from kplane.plugins.apiregistration.v1.schemas import APIServiceSchema
from kplane.plugins.apps.v1.schemas import DeploymentSchema
from kplane.plugins.core.v1.schemas import EventSchema

DEPLOYMENT = shape_of(DeploymentSchema)
T0, T1, T2, T3 = (f"2024-05-01T10:00:0{i}Z" for i in range(4))
NGINX = 'k:{"name":"nginx"}'

Obj = dict[str, Any]


def manifest(change: Callable[[Obj], Any] | None = None) -> Obj:
    """A typical Deployment manifest, as ``kubectl apply --server-side`` sends it."""
    obj: Obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {"name": "nginx", "image": "nginx:1.25", "ports": [{"containerPort": 80, "protocol": "TCP"}]}
                    ]
                },
            },
        },
    }
    if change is not None:
        change(obj)
    return obj


def config(spec: Obj | None = None, **metadata: Any) -> Obj:
    """A partial apply configuration: only the fields one manager cares about."""
    obj: Obj = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", **metadata}}
    if spec is not None:
        obj["spec"] = spec
    return obj


def with_containers(*items: Obj) -> Obj:
    return config({"template": {"spec": {"containers": list(items)}}})


def in_containers(item_fields: dict[str, Any]) -> dict[str, Any]:
    """A fieldsV1 set for fields of ``spec.template.spec.containers`` items."""
    return {"f:spec": {"f:template": {"f:spec": {"f:containers": item_fields}}}}


def do_apply(live: Obj | None, config: Obj, manager: str, *, force: bool = False, now: str = T1, **kw: Any) -> Obj:
    return apply(live, config, DEPLOYMENT, manager=manager, force=force, api_version="apps/v1", now=now, **kw)


def do_update(old: Obj | None, new: Obj, manager: str, *, now: str = T1, **kw: Any) -> Obj:
    """The object a create/PUT/PATCH stores: ``new`` with the managedFields the write leaves."""
    entries = managed_fields_after_update(old, new, DEPLOYMENT, manager=manager, api_version="apps/v1", now=now, **kw)
    meta = {k: v for k, v in new.get("metadata", {}).items() if k != "managedFields"}
    if entries:
        meta["managedFields"] = entries
    return {**new, "metadata": meta}


def edited(obj: Obj, change: Callable[[Obj], Any]) -> Obj:
    """A client's modified copy of a stored object (what a PUT sends back)."""
    out = copy.deepcopy(obj)
    change(out)
    return out


def entries(obj: Obj) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = obj["metadata"].get("managedFields", [])
    return found


def owned(obj: Obj, manager: str, operation: str | None = None) -> dict[str, Any]:
    found = [e for e in entries(obj) if e["manager"] == manager and operation in (None, e["operation"])]
    assert len(found) == 1, f"{manager}: {found}"
    fields_v1: dict[str, Any] = found[0]["fieldsV1"]
    return fields_v1


def without_managed_fields(obj: Obj) -> Obj:
    return {**obj, "metadata": {k: v for k, v in obj["metadata"].items() if k != "managedFields"}}


def containers(obj: Obj) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = obj["spec"]["template"]["spec"]["containers"]
    return items


def set_replicas(n: int) -> Callable[[Obj], None]:
    def change(obj: Obj) -> None:
        obj["spec"]["replicas"] = n

    return change


def set_image(image: str) -> Callable[[Obj], None]:
    def change(obj: Obj) -> None:
        containers(obj)[0]["image"] = image

    return change


# -- apply ------------------------------------------------------------------------------------------------


def test_create_by_apply_records_the_applied_fields_as_kube_apiserver_writes_them() -> None:
    config = manifest()
    obj = do_apply(None, config, "kubectl", now=T0)
    # kube-apiserver strips apiVersion, kind, metadata.name and metadata.namespace; the selector
    # is one leaf: Go's LabelSelector is atomic.
    assert entries(obj) == [
        {
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": "apps/v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:replicas": {},
                    "f:selector": {},
                    "f:template": {
                        "f:metadata": {"f:labels": {"f:app": {}}},
                        "f:spec": {
                            "f:containers": {
                                NGINX: {
                                    ".": {},
                                    "f:image": {},
                                    "f:name": {},
                                    "f:ports": {
                                        'k:{"containerPort":80,"protocol":"TCP"}': {
                                            ".": {},
                                            "f:containerPort": {},
                                            "f:protocol": {},
                                        }
                                    },
                                }
                            }
                        },
                    },
                },
            },
        }
    ]
    assert list(entries(obj)[0]["fieldsV1"]) == ["f:metadata", "f:spec"]  # serialized in SMD order
    assert without_managed_fields(obj) == config
    assert "managedFields" not in config["metadata"]  # inputs are not modified


def test_reapply_with_a_new_image_by_the_same_manager() -> None:
    first = do_apply(None, manifest(), "kubectl", now=T0)
    second = do_apply(first, manifest(set_image("nginx:1.27")), "kubectl", now=T1)
    assert containers(second)[0]["image"] == "nginx:1.27"
    assert [(e["manager"], e["operation"], e["time"]) for e in entries(second)] == [("kubectl", "Apply", T1)]
    assert owned(second, "kubectl") == owned(first, "kubectl")
    assert containers(first)[0]["image"] == "nginx:1.25"


def test_reapply_without_changes_keeps_the_time() -> None:
    first = do_apply(None, manifest(), "kubectl", now=T0)
    again = do_apply(first, manifest(), "kubectl", now=T2)
    assert entries(again) == entries(first)


@pytest.mark.parametrize(
    ("change", "fields"),
    [
        (set_replicas(5), [".spec.replicas"]),
        (set_image("nginx:1.27"), ['.spec.template.spec.containers[name="nginx"].image']),
        (lambda o: o["metadata"]["labels"].update(app="api"), [".metadata.labels.app"]),
        (
            lambda o: (set_replicas(5)(o), set_image("httpd")(o)),
            [".spec.replicas", '.spec.template.spec.containers[name="nginx"].image'],
        ),
    ],
)
def test_applying_a_different_value_of_a_field_another_applier_owns_conflicts(
    change: Callable[[Obj], Any], fields: list[str]
) -> None:
    live = do_apply(None, manifest(), "alice", now=T0)
    before = copy.deepcopy(live)
    with pytest.raises(ApplyConflict) as caught:
        do_apply(live, manifest(change), "bob")
    assert [(c.manager, c.field) for c in caught.value.conflicts] == [("alice", f) for f in fields]
    assert live == before


def test_applying_the_same_value_shares_ownership() -> None:
    live = do_apply(None, manifest(), "alice", now=T0)
    shared = do_apply(live, config({"replicas": 2}), "bob")
    assert owned(shared, "bob") == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" in owned(shared, "alice")["f:spec"]
    assert without_managed_fields(shared) == without_managed_fields(live)


def test_force_moves_ownership_to_the_applier() -> None:
    live = do_apply(None, manifest(), "alice", now=T0)
    forced = do_apply(live, config({"replicas": 7}), "bob", force=True)
    assert forced["spec"]["replicas"] == 7
    assert owned(forced, "bob") == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in owned(forced, "alice")["f:spec"]
    assert "f:selector" in owned(forced, "alice")["f:spec"]


@pytest.mark.parametrize("bob_owns_it", [False, True])
def test_a_field_left_out_of_the_next_apply_is_removed_unless_someone_else_owns_it(bob_owns_it: bool) -> None:
    live = do_apply(None, manifest(lambda o: o["metadata"]["labels"].update(tier="fe")), "alice", now=T0)
    if bob_owns_it:
        live = do_apply(live, config(labels={"tier": "fe"}), "bob", now=T1)
    after = do_apply(live, manifest(), "alice", now=T2)
    assert after["metadata"]["labels"] == ({"app": "web", "tier": "fe"} if bob_owns_it else {"app": "web"})
    assert owned(after, "alice")["f:metadata"] == {"f:labels": {"f:app": {}}}


def test_a_struct_nobody_owns_any_more_is_removed_whole() -> None:
    live = do_apply(None, manifest(lambda o: o["spec"].update(strategy={"type": "Recreate"})), "alice", now=T0)
    after = do_apply(live, manifest(), "alice")
    assert "strategy" not in after["spec"]
    assert after["metadata"]["name"] == "web"


def test_containers_are_merged_by_name_and_owned_per_container() -> None:
    live = do_apply(None, manifest(), "alice", now=T0)
    both = do_apply(live, with_containers({"name": "log", "image": "busybox"}), "bob", now=T1)
    assert [c["name"] for c in containers(both)] == ["nginx", "log"]
    assert owned(both, "bob") == in_containers({'k:{"name":"log"}': {".": {}, "f:image": {}, "f:name": {}}})
    assert 'k:{"name":"log"}' not in owned(both, "alice")["f:spec"]["f:template"]["f:spec"]["f:containers"]

    alice_again = do_apply(both, manifest(set_image("nginx:1.27")), "alice", now=T2)
    assert [(c["name"], c["image"]) for c in containers(alice_again)] == [("nginx", "nginx:1.27"), ("log", "busybox")]

    bob_leaves = do_apply(alice_again, config(), "bob", now=T3)
    assert [c["name"] for c in containers(bob_leaves)] == ["nginx"]
    assert [e["manager"] for e in entries(bob_leaves)] == ["alice"]


@pytest.mark.parametrize(
    ("live", "applied", "merged"),
    [
        (["a", "b", "c"], ["c", "x"], ["a", "b", "c", "x"]),
        (["a", "b", "c"], ["c", "a"], ["b", "c", "a"]),
        (["a", "b"], ["x", "b", "y"], ["a", "x", "b", "y"]),
        (["a"], ["x"], ["a", "x"]),
    ],
)
def test_keyed_lists_keep_the_applied_order_and_live_items_in_place(
    live: list[str], applied: list[str], merged: list[str]
) -> None:
    def named(names: list[str]) -> Obj:
        return with_containers(*({"name": n, "image": "img"} for n in names))

    obj = do_apply(do_apply(None, named(live), "alice", now=T0), named(applied), "bob")
    assert [c["name"] for c in containers(obj)] == merged


def test_an_item_the_applier_drops_goes_with_fields_an_updater_set_inside_it() -> None:
    # SMD removes the whole item (nobody owns the item itself), and the updater loses its field.
    sidecar = {"name": "log", "image": "busybox"}
    live = do_apply(None, manifest(lambda o: containers(o).append(sidecar)), "alice", now=T0)
    retagged = do_update(live, edited(live, lambda o: containers(o)[1].update(image="busybox:2")), "kubectl-set", now=T1)
    assert owned(retagged, "kubectl-set") == in_containers({'k:{"name":"log"}': {"f:image": {}}})
    after = do_apply(retagged, manifest(), "alice", now=T2)
    assert [c["name"] for c in containers(after)] == ["nginx"]
    assert [e["manager"] for e in entries(after)] == ["alice"]


def test_label_keys_are_owned_one_by_one() -> None:
    live = do_apply(None, manifest(), "alice", now=T0)
    both = do_apply(live, config(labels={"team": "core"}), "bob", now=T1)
    assert both["metadata"]["labels"] == {"app": "web", "team": "core"}
    assert owned(both, "bob") == {"f:metadata": {"f:labels": {"f:team": {}}}}
    without_app = do_apply(both, manifest(lambda o: o["metadata"].pop("labels")), "alice", now=T2)
    assert without_app["metadata"]["labels"] == {"team": "core"}


def test_finalizers_are_a_set() -> None:
    def finalizers(*names: str) -> Obj:
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "finalizers": list(names)}}

    live = do_apply(None, finalizers("a.io/x"), "alice", now=T0)
    both = do_apply(live, finalizers("b.io/y"), "bob", now=T1)
    assert both["metadata"]["finalizers"] == ["a.io/x", "b.io/y"]
    assert owned(both, "bob") == {"f:metadata": {"f:finalizers": {'v:"b.io/y"': {}}}}
    alice_drops = do_apply(both, config(), "alice", now=T2)
    assert alice_drops["metadata"]["finalizers"] == ["b.io/y"]


def test_an_edit_then_an_apply_of_the_same_field_conflicts_with_the_editor() -> None:
    live = do_apply(None, manifest(), "kubectl", now=T0)
    edit = do_update(live, edited(live, set_replicas(3)), "kubectl-edit", now=T1)
    assert owned(edit, "kubectl-edit", "Update") == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in owned(edit, "kubectl", "Apply")["f:spec"]
    with pytest.raises(ApplyConflict) as caught:
        do_apply(edit, manifest(set_replicas(5)), "kubectl", now=T2)
    error = caught.value.api_error()
    assert (error.code, error.reason) == (409, StatusReason.CONFLICT)
    assert error.message == 'Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1: .spec.replicas'
    assert error.details == {
        "causes": [
            {"reason": "FieldManagerConflict", "message": 'conflict with "kubectl-edit" using apps/v1', "field": ".spec.replicas"}
        ]
    }
    # Re-applying the edited value is no conflict; --force-conflicts takes the field back.
    assert do_apply(edit, manifest(set_replicas(3)), "kubectl", now=T2)["spec"]["replicas"] == 3
    forced = do_apply(edit, manifest(set_replicas(5)), "kubectl", force=True, now=T2)
    assert [e["manager"] for e in entries(forced)] == ["kubectl"]


def test_apply_to_an_object_nobody_tracked_yet_conflicts_with_before_first_apply() -> None:
    untracked = {**manifest(set_replicas(4)), "status": {"replicas": 4}}
    with pytest.raises(ApplyConflict) as caught:
        do_apply(untracked, manifest(), "kubectl")
    assert str(caught.value) == (
        'Apply failed with 1 conflict: conflict with "before-first-apply" using apps/v1: .spec.replicas'
    )
    adopted = do_apply(untracked, manifest(set_replicas(4)), "kubectl", now=T1)
    assert [(e["manager"], e["operation"], e.get("time")) for e in entries(adopted)] == [
        ("kubectl", "Apply", None),  # the object did not change: kube-apiserver sets no time
        ("before-first-apply", "Update", T1),
    ]
    assert "f:status" not in owned(adopted, "before-first-apply")


def test_status_is_neither_merged_nor_owned_on_the_main_resource() -> None:
    obj = do_apply(None, manifest(lambda o: o.update(status={"replicas": 9})), "kubectl", now=T0)
    assert "status" not in obj
    assert "f:status" not in owned(obj, "kubectl")


def test_null_in_an_applied_configuration_unsets_the_field_and_owns_it() -> None:
    live = do_apply(None, manifest(), "alice", now=T0)
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"paused": None}}
    after = do_apply(live, config, "bob")
    assert "paused" not in after["spec"]
    assert owned(after, "bob") == {"f:spec": {"f:paused": {}}}


def test_apply_entries_come_before_update_entries() -> None:
    created = do_update(None, manifest(), "kubectl-create", now=T0)
    labelled = do_apply(created, config(labels={"x": "1"}), "ops", now=T3)
    assert [(e["manager"], e["operation"]) for e in entries(labelled)] == [("ops", "Apply"), ("kubectl-create", "Update")]


# -- update ------------------------------------------------------------------------------------------------


def test_create_owns_every_field_set_with_the_dots_kube_apiserver_writes() -> None:
    created = do_update(None, manifest(), "kubectl-create", now=T0)
    assert entries(created) == [
        {
            "manager": "kubectl-create",
            "operation": "Update",
            "apiVersion": "apps/v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {
                    "f:replicas": {},
                    "f:selector": {},  # atomic, and null in Go's empty Deployment
                    "f:template": {
                        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                        "f:spec": {
                            "f:containers": {  # no ".": the list is null in Go's empty Deployment
                                NGINX: {
                                    ".": {},
                                    "f:image": {},
                                    "f:name": {},
                                    "f:ports": {
                                        ".": {},
                                        'k:{"containerPort":80,"protocol":"TCP"}': {
                                            ".": {},
                                            "f:containerPort": {},
                                            "f:protocol": {},
                                        },
                                    },
                                }
                            },
                        },
                    },
                },
            },
        }
    ]


def test_a_pointer_struct_owns_its_dot_a_value_struct_does_not() -> None:
    rolling = manifest(lambda o: o["spec"].update(strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}))
    created = do_update(None, rolling, "m", now=T0)
    assert owned(created, "m")["f:spec"]["f:strategy"] == {"f:rollingUpdate": {".": {}, "f:maxSurge": {}}, "f:type": {}}


def test_a_pointer_with_omitempty_is_absent_from_the_empty_object_a_create_starts_from() -> None:
    """APIServiceSpec.service is ``*ServiceReference`` with ``omitempty`` (kube-aggregator's v1
    types): absent before the create, so the create owns the struct with its ``.``; the int32
    priorities without ``omitempty`` are 0 there, and a create that sets them owns them."""
    service = {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": "v1.example.com"},
        "spec": {"service": {"namespace": "default", "name": "api"}, "group": "example.com", "version": "v1",
                 "groupPriorityMinimum": 1000, "versionPriority": 0},
    }
    entries_ = managed_fields_after_update(None, service, shape_of(APIServiceSchema), manager="m",
                                           api_version="apiregistration.k8s.io/v1", now=T0)
    assert entries_[0]["fieldsV1"] == {"f:spec": {
        "f:group": {}, "f:groupPriorityMinimum": {}, "f:service": {".": {}, "f:name": {}, "f:namespace": {}},
        "f:version": {}}}


def test_fields_go_always_writes_are_not_owned_at_their_zero_value() -> None:
    """An Event as the encoder writes it carries ``reportingComponent: ""``, ``source: {}`` and
    ``firstTimestamp: null`` (no omitempty, or struct values): so does the empty object a create
    starts from, so only what the client set is owned."""
    event = {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "default", "creationTimestamp": None},
        "involvedObject": {"kind": "Pod", "name": "p"}, "reason": "Started", "source": {},
        "firstTimestamp": None, "lastTimestamp": None, "eventTime": None, "reportingComponent": "", "reportingInstance": "kubelet",
    }
    entries_ = managed_fields_after_update(None, event, shape_of(EventSchema), manager="m", api_version="v1", now=T0)
    assert entries_[0]["fieldsV1"] == {
        "f:involvedObject": {"f:kind": {}, "f:name": {}}, "f:reason": {}, "f:reportingInstance": {}}


def test_an_update_never_owns_metadata_itself() -> None:
    nameless = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {}, "spec": {"replicas": 1}}
    created = do_update(None, nameless, "m", now=T0)
    assert owned(created, "m") == {"f:spec": {"f:replicas": {}}}


def test_an_update_records_only_the_fields_it_changed() -> None:
    created = do_update(None, manifest(), "kubectl-create", now=T0)
    set_image_write = do_update(created, edited(created, set_image("nginx:1.27")), "kubectl-set", now=T1)
    assert owned(set_image_write, "kubectl-set") == in_containers({NGINX: {"f:image": {}}})
    creator = owned(set_image_write, "kubectl-create")
    assert creator["f:spec"]["f:template"]["f:spec"]["f:containers"][NGINX] == {
        ".": {},
        "f:name": {},
        "f:ports": owned(created, "kubectl-create")["f:spec"]["f:template"]["f:spec"]["f:containers"][NGINX]["f:ports"],
    }
    assert entries(set_image_write)[0]["time"] == T0  # other entries keep their time


def test_an_update_that_changes_nothing_leaves_the_entries_alone() -> None:
    created = do_update(None, manifest(), "kubectl-create", now=T0)
    same = do_update(created, edited(created, lambda o: None), "kubectl-replace", now=T1)
    assert entries(same) == entries(created)


def test_removed_fields_leave_their_owners() -> None:
    created = do_update(None, manifest(lambda o: o["metadata"]["labels"].update(tier="fe")), "kubectl-create", now=T0)
    relabelled = do_update(created, edited(created, lambda o: o["metadata"]["labels"].pop("tier")), "kubectl-label", now=T1)
    assert owned(relabelled, "kubectl-create")["f:metadata"] == {"f:labels": {".": {}, "f:app": {}}}
    assert [e["manager"] for e in entries(relabelled)] == ["kubectl-create"]  # kubectl-label owns nothing


def test_the_same_manager_accumulates_its_changes_in_one_entry() -> None:
    created = do_update(None, manifest(), "kubectl-create", now=T0)
    first = do_update(created, edited(created, set_replicas(3)), "ctl", now=T1)
    second = do_update(first, edited(first, set_image("nginx:1.27")), "ctl", now=T2)
    entry = [e for e in entries(second) if e["manager"] == "ctl"]
    assert len(entry) == 1 and entry[0]["time"] == T2
    assert set(entry[0]["fieldsV1"]["f:spec"]) == {"f:replicas", "f:template"}


@pytest.mark.parametrize(
    ("subresource", "change", "owner_fields"),
    [
        ("", lambda o: o.update(status={"replicas": 2}), None),
        ("status", lambda o: o.update(status={"replicas": 2}), {"f:status": {"f:replicas": {}}}),
        ("status", set_replicas(9), None),
    ],
)
def test_reset_fields_are_not_owned(
    subresource: str, change: Callable[[Obj], Any], owner_fields: dict[str, Any] | None
) -> None:
    created = do_update(None, manifest(), "kubectl-create", now=T0)
    written = do_update(created, edited(created, change), "controller", now=T1, subresource=subresource)
    mine = [e for e in entries(written) if e["manager"] == "controller"]
    assert [e["fieldsV1"] for e in mine] == ([owner_fields] if owner_fields else [])
    assert all(e.get("subresource") == "status" for e in mine)
    assert owned(written, "kubectl-create") == owned(created, "kubectl-create")


def test_an_object_without_managed_fields_stays_untracked() -> None:
    untracked = manifest()
    written = edited(untracked, set_replicas(3))
    assert managed_fields_after_update(untracked, written, DEPLOYMENT, manager="m", api_version="apps/v1", now=T1) == []


@pytest.mark.parametrize("reset", [[], [{}]])
def test_a_client_can_clear_managed_fields(reset: list[Any]) -> None:
    created = do_update(None, manifest(), "kubectl-create", now=T0)
    cleared = edited(created, lambda o: o["metadata"].update(managedFields=reset))
    assert managed_fields_after_update(created, cleared, DEPLOYMENT, manager="m", api_version="apps/v1", now=T1) == []


def test_managed_fields_a_client_rewrites_are_used_and_normalized() -> None:
    created = do_update(None, manifest(), "kubectl-create", now=T0)
    mine = {
        "manager": "mine",
        "operation": "Update",
        "apiVersion": "apps/v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {'k:{ "name": "nginx" }': {"f:image": {}}}}}}},
    }
    rewritten = edited(created, lambda o: o["metadata"].update(managedFields=[mine]))
    written = do_update(created, rewritten, "kubectl-replace", now=T1)
    assert entries(written) == [{**mine, "fieldsV1": in_containers({NGINX: {"f:image": {}}})}]


def test_update_managers_beyond_ten_are_folded_into_ancient_changes() -> None:
    obj = do_update(None, manifest(), "kubectl-create", now="2024-05-01T09:00:00Z")
    for i in range(11):
        label = lambda o, i=i: o["metadata"]["labels"].update({f"l{i}": "x"})  # noqa: E731
        obj = do_update(obj, edited(obj, label), f"ctl-{i:02d}", now=f"2024-05-01T10:00:{i:02d}Z")
    managers = [e["manager"] for e in entries(obj)]
    assert len(managers) == 10
    assert managers[0] == "ancient-changes" and "kubectl-create" not in managers and "ctl-00" not in managers
    ancient = owned(obj, "ancient-changes")
    assert "f:l0" in ancient["f:metadata"]["f:labels"] and "f:replicas" in ancient["f:spec"]


def test_an_object_that_does_not_fit_its_list_keys_keeps_its_managed_fields() -> None:
    created = do_update(None, manifest(), "kubectl-create", now=T0)
    broken = edited(created, lambda o: containers(o).append({"image": "no-name"}))
    kept = managed_fields_after_update(created, broken, DEPLOYMENT, manager="m", api_version="apps/v1", now=T1)
    assert kept == entries(created)


# -- schema features and errors ------------------------------------------------------------------------


class _PortSchema(Schema):
    port = fields.Int()
    protocol = fields.Str(metadata={"default": "TCP"})
    name = fields.Str()


class _SelectorSchema(Schema):
    match_labels = fields.StrMap()


class _WidgetSpecSchema(Schema):
    ports = fields.List(fields.Nested(_PortSchema), metadata=fields.merge_by("port", list_map_keys=["port", "protocol"]))
    selector = fields.Nested(_SelectorSchema, metadata={"map_type": "atomic"})
    tags = fields.List(fields.Str())


class _WidgetSchema(Schema):
    metadata = fields.Nested(ObjectMetaSchema)
    spec = fields.Nested(_WidgetSpecSchema)


def test_key_defaults_atomic_structs_and_atomic_lists() -> None:
    widget = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"ports": [{"port": 80}], "selector": {"matchLabels": {"a": "b"}}, "tags": ["x"]},
    }
    obj = apply(None, widget, shape_of(_WidgetSchema), manager="m", force=False, api_version="example.com/v1", now=T0)
    assert entries(obj)[0]["fieldsV1"] == {
        "f:spec": {
            "f:ports": {'k:{"port":80,"protocol":"TCP"}': {".": {}, "f:port": {}}},
            "f:selector": {},
            "f:tags": {},
        }
    }


def test_duplicate_keys_in_an_applied_configuration_are_refused() -> None:
    config = manifest(lambda o: containers(o).append({"name": "nginx", "image": "other"}))
    with pytest.raises(APIError) as caught:
        do_apply(None, config, "kubectl")
    assert caught.value.code == 400  # kube-apiserver says 500; bad input is a 400 here
    assert caught.value.message == (
        "failed to create typed patch object (default/web; apps/v1, Kind=Deployment): "
        '.spec.template.spec.containers: duplicate entries for key [name="nginx"]'
    )


NOT_A_MAP = "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([], f"{NOT_A_MAP} array into Go value of type map[string]interface {{}}"),
        ("x", f"{NOT_A_MAP} string into Go value of type map[string]interface {{}}"),
        ({"metadata": {"name": "web"}}, "invalid object type: /, Kind="),
        ({"apiVersion": "apps/v1", "metadata": {"name": "web"}}, "invalid object type: apps/v1, Kind="),
        ({"apiVersion": "v1", "kind": "Deployment"}, "invalid object type: /v1, Kind=Deployment"),
        ({"apiVersion": "a/b/c", "kind": "Deployment"}, "invalid object type: /, Kind="),
        ({**config(), "metadata": {"managedFields": []}}, "metadata.managedFields must be nil"),
        (None, "invalid object type: /, Kind="),  # null is decoded as an empty object
    ],
)
def test_bad_apply_bodies_are_refused_with_400(body: Any, message: str) -> None:
    with pytest.raises(APIError) as caught:
        check_apply_body(body, "apps/v1", "Deployment")
    assert (caught.value.code, caught.value.reason, caught.value.message) == (400, StatusReason.BAD_REQUEST, message)


@pytest.mark.parametrize(
    "body",
    [{"apiVersion": "apps/v1", "kind": "Deployment"}, manifest(), {**manifest(), "metadata": {"managedFields": None}}],
)
def test_good_apply_bodies_pass(body: Any) -> None:
    check_apply_body(body, "apps/v1", "Deployment")


def test_conflict_message_for_several_managers() -> None:
    conflicts = [
        Conflict("status-writer", "Update", "apps/v1", "status", ".metadata.labels.x"),
        Conflict("kubectl", "Apply", "", "", ".spec.replicas"),
        Conflict("kubectl", "Apply", "", "", ".spec.paused"),
    ]
    error = conflict_error(conflicts)
    assert error.message == (
        'Apply failed with 3 conflicts: conflicts with "kubectl":\n- .spec.replicas\n- .spec.paused\n'
        'conflicts with "status-writer" with subresource "status" using apps/v1:\n- .metadata.labels.x'
    )
    assert error.status()["details"]["causes"][0] == {
        "reason": "FieldManagerConflict",
        "message": 'conflict with "status-writer" with subresource "status" using apps/v1',
        "field": ".metadata.labels.x",
    }


@pytest.mark.parametrize(
    ("user_agent", "manager"),
    [
        ("kubectl/v1.31.1 (linux/amd64) kubernetes/948afe5", "kubectl"),
        ("OpenAPI-Generator/32.0.1/python", "OpenAPI-Generator"),
        ("Go-http-client/1.1", "Go-http-client"),
        ("", "unknown"),
        ("tab\there/1", "tabhere"),
        ("x" * 200, "x" * 128),
    ],
)
def test_default_manager_comes_from_the_user_agent(user_agent: str, manager: str) -> None:
    assert default_manager(user_agent) == manager


# -- from client-side apply ------------------------------------------------------------------------------

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def go_json(obj: Obj) -> str:
    """A configuration as kubectl writes it into the last-applied annotation (Go's json.Encoder)."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") + "\n"


def client_side_applied(change: Callable[[Obj], Any] | None = None, last: Obj | None = None) -> Obj:
    """What ``kubectl apply`` (client-side) creates: the manifest, its last-applied annotation
    (``last``, by default the manifest itself) and an Update entry of kubectl-client-side-apply."""
    obj = manifest(change)
    obj["metadata"]["annotations"] = {LAST_APPLIED: go_json(manifest(change) if last is None else last)}
    return do_update(None, obj, "kubectl-client-side-apply", now=T0)


def edited_manifest() -> Obj:
    return manifest(lambda o: (set_replicas(3)(o), set_image("nginx:1.26")(o)))


def test_kubectl_takes_over_the_fields_its_client_side_apply_set() -> None:
    live = client_side_applied()
    upgraded = do_apply(live, edited_manifest(), "kubectl")
    assert upgraded["spec"]["replicas"] == 3 and containers(upgraded)[0]["image"] == "nginx:1.26"
    mine = owned(upgraded, "kubectl", "Apply")
    assert mine["f:spec"]["f:replicas"] == {} and mine["f:spec"]["f:template"]["f:spec"]["f:containers"][NGINX]["f:image"] == {}
    left = owned(upgraded, "kubectl-client-side-apply")
    assert "f:replicas" not in left["f:spec"]
    assert "f:image" not in left["f:spec"]["f:template"]["f:spec"]["f:containers"][NGINX]
    assert "f:selector" in left["f:spec"]  # unchanged fields stay shared
    assert left["f:metadata"]["f:annotations"] == {".": {}, f"f:{LAST_APPLIED}": {}}
    # lastAppliedUpdater: the annotation now holds the configuration kubectl applied
    assert upgraded["metadata"]["annotations"] == {LAST_APPLIED: go_json(edited_manifest())}


def test_another_manager_still_conflicts_with_client_side_apply() -> None:
    live = client_side_applied()
    with pytest.raises(ApplyConflict) as caught:
        do_apply(live, edited_manifest(), "other")
    assert [(c.manager, c.field) for c in caught.value.conflicts] == [
        ("kubectl-client-side-apply", ".spec.replicas"),
        ("kubectl-client-side-apply", '.spec.template.spec.containers[name="nginx"].image'),
    ]


def test_fields_whose_live_value_left_the_last_applied_one_still_conflict() -> None:
    """Only fields live still holds as last applied are the client-side applier's to hand over."""
    live = client_side_applied(set_replicas(5), last=manifest())  # the annotation says 2, live has 5
    with pytest.raises(ApplyConflict) as caught:
        do_apply(live, edited_manifest(), "kubectl")
    assert [(c.manager, c.field) for c in caught.value.conflicts] == [("kubectl-client-side-apply", ".spec.replicas")]
    forced = do_apply(live, edited_manifest(), "kubectl", force=True)
    assert forced["spec"]["replicas"] == 3


@pytest.mark.parametrize(
    "annotation",
    [
        None,
        "",
        "{not json",
        "[1]",
        go_json({**manifest(), "apiVersion": "apps/v1beta2"}),
        go_json({k: v for k, v in manifest().items() if k != "kind"}),
        go_json(manifest(lambda o: o["spec"]["template"]["spec"]["containers"].append({"image": "x"}))),  # no key
    ],
)
def test_without_a_usable_last_applied_annotation_conflicts_stand(annotation: str | None) -> None:
    live = client_side_applied()
    if annotation is None:
        del live["metadata"]["annotations"]
    else:
        live["metadata"]["annotations"][LAST_APPLIED] = annotation
    with pytest.raises(ApplyConflict) as caught:
        do_apply(live, edited_manifest(), "kubectl")
    assert len(caught.value.conflicts) == 2


def test_the_annotation_is_kept_only_where_it_was_and_within_the_size_limit() -> None:
    created = do_apply(None, manifest(), "kubectl", now=T0)
    assert "annotations" not in created["metadata"]  # never added by server-side apply
    live = client_side_applied()
    big = edited_manifest()
    big["metadata"]["annotations"] = {"note": "x" * (128 * 1024)}
    applied = do_apply(live, big, "kubectl")
    assert applied["metadata"]["annotations"] == {"note": "x" * (128 * 1024)}  # 256 KiB would be exceeded
    html = edited_manifest()
    # a configuration that names the annotation (with its live value, else it would conflict) leaves it out
    html["metadata"]["annotations"] = {"note": "<a&b>", LAST_APPLIED: live["metadata"]["annotations"][LAST_APPLIED]}
    escaped = do_apply(live, html, "kubectl")["metadata"]["annotations"][LAST_APPLIED]
    assert escaped == go_json({**html, "metadata": {**html["metadata"], "annotations": {"note": "<a&b>"}}})
    assert "\\u003ca\\u0026b\\u003e" in escaped
    other = do_apply(live, config({"paused": True}), "other")
    assert other["metadata"]["annotations"] == live["metadata"]["annotations"]  # only kubectl's apply updates it
