"""apps/v1beta2: the beta version, off unless ``--runtime-config apps/v1beta2=true``.

Its Deployment and ReplicaSet have the v1 shape and defaults, so conversion is automatic; the
version exists so that an object written through one version reads back through the other.
"""
