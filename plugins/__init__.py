"""kplane's built-in API groups, plugins like any other: each imports only :mod:`kplane.api`."""
