"""Structural schemas: what apiextensions-apiserver's ``pkg/apiserver/schema`` does with a CRD
version's ``openAPIV3Schema``, on the JSON form of both (schemas keyed by their JSON names).

* :mod:`.structural` - whether a schema is structural, with kube-apiserver's messages;
* :mod:`.validation` - a value checked against a schema (types, formats, bounds, ...);
* :mod:`.pruning` - unknown fields removed (and reported, for ``fieldValidation``);
* :mod:`.defaulting` - ``default`` values filled in;
* :mod:`.cel` - ``x-kubernetes-validations`` rules.
"""
