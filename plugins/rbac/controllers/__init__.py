"""The RBAC plugin's controllers."""
