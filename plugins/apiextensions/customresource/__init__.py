"""Serving the resources CustomResourceDefinitions define (apiextensions-apiserver's
``customresource`` registry and ``crdHandler``).

A CRD becomes one :class:`~kplane.plugins.apiextensions.customresource.resourcetype.CustomResourceType`
in the server's Scheme and a strategy (and ``status``/``scale``) in its Registry
(:mod:`~kplane.plugins.apiextensions.customresource.serving`); from then on the generic Store,
routing, discovery, OpenAPI, watch cache and server-side apply serve it as any plugin's kind.
Objects stay unstructured (:class:`~kplane.plugins.apiextensions.customresource.types.CustomResource`):
their shape is the CRD's schema (:mod:`kplane.plugins.apiextensions.schema`), not a Python class.
"""
