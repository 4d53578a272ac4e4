"""The admissionregistration.k8s.io API group: how a cluster extends admission without code in
the server - webhooks it calls over HTTPS and CEL policies it evaluates itself.

They run after every plugin's own admission, in kube-apiserver's order: MutatingAdmissionPolicy,
MutatingAdmissionWebhook, then (validating) ValidatingAdmissionPolicy, ValidatingAdmissionWebhook,
then ResourceQuota (``AdmissionChain`` keeps these names last, in that order).

* :mod:`.types`, ``v1/``, ``v1beta1/``, ``v1alpha1/``, :mod:`.strategy`, :mod:`.validation`,
  :mod:`.printers`: the kinds (webhook configurations, policies and their bindings).
* :mod:`.attributes`: one request as webhooks and policies see it, in the version they ask for.
* :mod:`.matching`: rules, ``matchPolicy``, namespace and object selectors (both use them).
* :mod:`.expressions`: the CEL of admission (``object``, ``oldObject``, ``request``, ...);
  :mod:`.matchconditions`: ``matchConditions``, for webhooks and policies alike.
* ``webhooks/``: calling webhooks; ``policy/``: evaluating policies.
"""

from __future__ import annotations

GROUP = "admissionregistration.k8s.io"
