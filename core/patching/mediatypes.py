"""The Content-Types of a PATCH request, Kubernetes' ``types.PatchType``.

They are the wire contract between client and server, so both sides take them from here (this
module imports nothing, so a client may use it without the server).
"""

from __future__ import annotations

#: RFC 6902 JSON patch: a list of operations.
JSON_PATCH = "application/json-patch+json"
#: RFC 7386 JSON merge patch: the changed fields; null deletes.
MERGE_PATCH = "application/merge-patch+json"
#: Kubernetes' strategic merge patch: lists merged by their keys.
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
#: Server-side apply: the fields a manager owns.
APPLY_PATCH = "application/apply-patch+yaml"

# Every patch format, in the order kube-apiserver lists them.
PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH)
