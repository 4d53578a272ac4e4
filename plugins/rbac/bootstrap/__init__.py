"""The bootstrap policy (``plugin/pkg/auth/authorizer/rbac/bootstrappolicy``): the cluster roles and
bindings every server reconciles on start (:mod:`.reconcile`), the general ones in :mod:`.policy`,
one per built-in controller in :mod:`.controller_policy`."""
