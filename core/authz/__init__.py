"""Authorization: may this user do what the request asks (k8s.io/apiserver ``pkg/authorization``).

- :mod:`.attributes`: what a request asks, as the authorizers see it (verb, group, resource,
  namespace, name, or a non-resource path).
- :mod:`.authorizers`: the decision, the authorizer and rule-resolver protocols, and the union
  of the modes ``--authorization-mode`` names (``AlwaysAllow``, plugins' ``RBAC``).
- :mod:`.filter`: the ``AUTHORIZATION`` filter, a 403 with Kubernetes' message when not allowed.
"""
