"""Field ownership: ``metadata.managedFields`` and server-side apply, as a library of pure functions.

This is kube-apiserver's field manager (``k8s.io/apimachinery/pkg/util/managedfields``) on top of
structured-merge-diff (SMD), working on wire-format JSON dicts and driven by our compiled schemas
(:mod:`kplane.core.runtime.schema`); it knows nothing of HTTP. Its layers, bottom up:

* :mod:`~kplane.core.managedfields.fieldtypes`: how SMD types a schema field (struct, map,
  associative list, set, atomic);
* :mod:`~kplane.core.managedfields.fieldpaths`: path elements (``f:``, ``k:``, ``v:``) and how
  paths are ordered and printed;
* :mod:`~kplane.core.managedfields.fieldsets`: sets of field paths in ``fieldsV1`` form and their
  algebra (union, difference, intersection);
* :mod:`~kplane.core.managedfields.merge`: walks over objects along their types (compare, the
  field set of a configuration, merge, prune);
* :mod:`~kplane.core.managedfields.entries`: ``managedFields`` entries decoded, encoded and
  updated by one write;
* :mod:`~kplane.core.managedfields.lastapplied`: taking over from client-side apply's
  annotation;
* :mod:`~kplane.core.managedfields.fieldmanager`: the public API (ownership after a create,
  PUT or patch; server-side apply; its conflicts and checks).

Field sets are kept in the ``fieldsV1`` form itself: a dict from path elements to child sets,
``{"f:spec": {"f:replicas": {}}}``. An empty dict is an owned leaf; a node that is owned and has
children carries a ``"."`` key, as SMD serializes it. Path elements are ``f:<field>``,
``k:<json of the key fields, sorted>`` for an associative-list item, ``v:<json>`` for a set item.
Sets are kept sorted the way SMD orders them, so they serialize as kube-apiserver writes them,
and entries a write did not touch are passed through as the very same dicts.

Results share unchanged sub-objects with their inputs (nothing is deep-copied): treat inputs and
results as read-only. Where this differs from kube-apiserver: every manager's set is read
against the one schema given (no conversion between API versions).
"""


