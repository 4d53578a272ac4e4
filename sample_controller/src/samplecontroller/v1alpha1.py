"""The wire form of ``samplecontroller.k8s.io/v1alpha1`` Foo: the ``openAPIV3Schema`` of the CRD
in the original's ``artifacts/examples/crd-status-subresource.yaml``.

The schema gives the types; the bounds of ``spec.replicas`` (``minimum: 1``, ``maximum: 10``) are
checked by :mod:`samplecontroller.strategy`, which words them as the CRD's validation does.
A CRD's objects are JSON kept as the client sent them, not Go structs: nothing unset is written, so
``spec`` and ``status`` are declared ``pointer: True`` (absent until set, as in unstructured JSON).
"""

from __future__ import annotations

from kplane.api import ObjectMetaSchema, Schema, fields


class FooSpecSchema(Schema):
    deployment_name = fields.Str(metadata={"description": "Name of the Deployment the controller keeps for this Foo."})
    replicas = fields.Int32(metadata={"description": "Replicas of that Deployment, from 1 to 10."})


class FooStatusSchema(Schema):
    available_replicas = fields.Int32(metadata={"description": "Available replicas of the Deployment, as last seen."})


class FooSchema(Schema):
    """Foo is a specification for a Foo resource."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": "Standard object metadata."})
    spec = fields.Nested(FooSpecSchema, metadata={"pointer": True, "description": "FooSpec is the spec for a Foo resource."})
    status = fields.Nested(FooStatusSchema, metadata={"pointer": True, "description": "FooStatus is the status for a Foo resource."})
