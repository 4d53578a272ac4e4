"""Patches over decoded JSON objects: JSON patch, JSON merge patch and strategic merge patch.

A library, not part of the HTTP layer: each function takes the current object and the decoded
patch (plus, for strategic merge, the schema's :class:`~kplane.core.runtime.schema.Shape`) and
returns the patched object, or raises :class:`~kplane.core.patching.errors.PatchError` with the
status kube-apiserver answers. :mod:`~kplane.core.patching.mediatypes` names the four patch
formats for servers and clients alike.
"""
