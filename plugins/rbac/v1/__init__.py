"""rbac.authorization.k8s.io/v1: the stable version, and the storage version of the group."""
