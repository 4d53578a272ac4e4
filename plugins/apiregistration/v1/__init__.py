"""apiregistration.k8s.io/v1: the only version served, and the storage version."""
