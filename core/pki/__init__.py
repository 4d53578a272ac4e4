"""kplane's public key infrastructure: the CA in ``DATA_DIR/pki`` and the certificates it signs.

- :mod:`~kplane.core.pki.certificates`: making and reading certificates (ECDSA P-256, with
  ``cryptography``): a CA, serving and client certificates, their subject alternative names;
- :mod:`~kplane.core.pki.store`: the files in ``DATA_DIR/pki``, made on first start, reused
  after, the serving and admin certificates renewed when they no longer fit, the CA never replaced.
"""
