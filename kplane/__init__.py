"""kplane: the Kubernetes API machinery, rebuilt in Python.

Every import name lives under ``kplane``: ``kplane.core`` (the machinery, in the repository's
``core/`` folder), ``kplane.plugins`` (the built-in API groups, in ``plugins/``) and
``kplane.api``, the one module a plugin imports from.
"""
