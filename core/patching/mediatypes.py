"""The Content-Types of a PATCH request, Kubernetes' ``types.PatchType``.

They are the wire contract between client and server, so both sides take them from here (this
module imports nothing, so a client may use it without the server).
"""

from __future__ import annotations

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"

# Every patch format, in the order kube-apiserver lists them.
PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH)
