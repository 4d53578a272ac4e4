"""The compiled schema loader: same verdicts as marshmallow, visiting only present fields."""

from __future__ import annotations

from marshmallow import ValidationError, post_load, validate

from kplane.core.runtime import fields
from kplane.core.runtime.schema import Schema, camel_case, load, python_to_wire, shape_of, wire_to_python


class Port(Schema):
    container_port = fields.Int(required=True)
    host_ip = fields.Str(data_key="hostIP")


class Container(Schema):
    name = fields.Str()
    ports = fields.List(fields.Nested(Port), validate=validate.Length(max=2))
    env = fields.Dict(keys=fields.Str(), values=fields.Nested(Port))


class Hooked(Schema):
    size = fields.Int()

    @post_load
    def double(self, data: dict, **kwargs: object) -> dict:
        if data.get("size", 0) < 0:
            raise ValidationError("must not be negative", "size")
        return {**data, "size": data.get("size", 0) * 2}


class Holder(Schema):
    container = fields.Nested(Container)
    hooked = fields.Nested(Hooked)
    flag = fields.Bool()


def test_camel_case() -> None:
    assert camel_case("container_port") == "containerPort"
    assert camel_case("continue_") == "continue"
    assert camel_case("name") == "name"


def test_renames_and_round_trips() -> None:
    wire = {"container": {"name": "c", "ports": [{"containerPort": 80, "hostIP": "1.2.3.4"}]}, "flag": True}
    loaded = load(shape_of(Holder), wire)
    assert loaded.errors == [] and loaded.unknown == []
    assert loaded.data == {"container": {"name": "c", "ports": [{"container_port": 80, "host_ip": "1.2.3.4"}]}, "flag": True}
    assert python_to_wire(shape_of(Holder), loaded.data) == {**wire, "hooked": {}}  # a struct value
    assert wire_to_python(shape_of(Holder), wire) == loaded.data


class Written(Schema):
    """Fields as Go's encoder writes them when unset."""

    name = fields.Str(metadata={"omitempty": False})  # `json:"name"`
    count = fields.Int(metadata={"omitempty": False})
    ready = fields.Bool(metadata={"omitempty": False})
    since = fields.Time(metadata={"omitempty": False})  # a metav1.Time value: null
    items = fields.List(fields.Str(), metadata={"omitempty": False})  # a slice: null, [] when empty
    port = fields.Nested(Port)  # a struct value: its own zero object
    pointer = fields.Nested(Port, metadata={"pointer": True})  # omitempty pointer: left out
    selector = fields.Nested(Port, metadata={"pointer": True, "omitempty": False})  # null
    note = fields.Str()  # omitempty: left out


def test_unset_fields_are_written_as_go_writes_them() -> None:
    assert python_to_wire(shape_of(Written), {}) == {
        "name": "", "count": 0, "ready": False, "since": None, "items": None, "port": {}, "selector": None}
    assert python_to_wire(shape_of(Written), {"items": [], "pointer": {}, "port": {"host_ip": "h"}})["items"] == []
    assert python_to_wire(shape_of(Written), {"pointer": {}, "port": {"host_ip": "h"}})["port"] == {"hostIP": "h"}


def test_type_errors_have_kube_paths() -> None:
    wire = {"container": {"ports": [{"containerPort": "80"}, {"containerPort": True}], "env": {"A": 3}}, "flag": "yes"}
    loaded = load(shape_of(Holder), wire)
    paths = sorted(e.field for e in loaded.errors)
    assert paths == ["container.env.A", "container.ports[0].containerPort", "container.ports[1].containerPort", "flag"]


def test_required_unknown_and_validators() -> None:
    wire = {"container": {"ports": [{"hostIP": "x"}, {"containerPort": 1}, {"containerPort": 2}], "bogus": 1}, "extra": {}}
    loaded = load(shape_of(Holder), wire)
    assert loaded.unknown == ["container.bogus", "extra"]
    messages = {(e.field, e.type.value) for e in loaded.errors}
    assert ("container.ports[0].containerPort", "FieldValueRequired") in messages
    assert any(field == "container.ports" for field, _ in messages)  # Length(max=2)


def test_wrong_container_shapes() -> None:
    loaded = load(shape_of(Holder), {"container": [1], "hooked": {"size": 1}})
    assert [e.field for e in loaded.errors] == ["container"]
    loaded = load(shape_of(Holder), {"container": {"ports": {"a": 1}}})
    assert [e.field for e in loaded.errors] == ["container.ports"]


def test_schema_hooks_run_through_marshmallow() -> None:
    assert load(shape_of(Holder), {"hooked": {"size": 2}}).data == {"hooked": {"size": 4}}
    failed = load(shape_of(Holder), {"hooked": {"size": -1, "nope": 1}})
    assert [e.field for e in failed.errors] == ["hooked.size"] and failed.unknown == ["hooked.nope"]


def test_null_means_unset() -> None:
    assert load(shape_of(Holder), {"container": None, "flag": None}).data == {"container": None, "flag": None}
