"""Prometheus metrics named and labelled as Kubernetes' components name them (``/metrics``).

Each server, and each stand-alone controller-manager, has a registry of its own
(:func:`kplane.core.metrics.families.new_registry`), never prometheus_client's global one: several
servers in one process (the test suite, an embedder) then count apart. The hot paths count into
plain dicts (:class:`~kplane.core.metrics.families.Tally`), which the registry turns into metric
families only when scraped; everything runs on one event loop, so no lock is taken.
"""
