"""A server put together from the layers: storage (which backend, the watch cache), plugins,
registry and the HTTP application (:mod:`kplane.core.server`), started and stopped as one.

- :mod:`~kplane.core.serving.apiserver`: :class:`APIServer`, the start-up and shutdown order;
- :mod:`~kplane.core.serving.storage`: the storage a server serves from;
- :mod:`~kplane.core.serving.datadir`: the data dir and the kubeconfig written into it;
- :mod:`~kplane.core.serving.tls`: HTTPS: the listener's TLS, the loopback clients' trust, the
  kubeconfig's credentials (certificates from :mod:`kplane.core.pki`).
"""
