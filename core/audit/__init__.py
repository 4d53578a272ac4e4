"""Auditing: a record of who asked the server what, and what it answered (k8s.io/apiserver
``pkg/audit``, ``pkg/endpoints/filters/audit.go``, ``plugin/pkg/audit/log``).

- :mod:`.policy`: the ``audit.k8s.io/v1`` Policy, validated, deciding each request's level.
- :mod:`.event`: the ``audit.k8s.io/v1`` Event of a request and each stage's record of it.
- :mod:`.backend`: the log (``--audit-log-path``), written by a thread, rotated as kube's.
- :mod:`.filter`: the filters that record requests, installed only with a policy and a log.
- :mod:`.options`: the ``kplane serve`` flags, with kube-apiserver's names.
"""
