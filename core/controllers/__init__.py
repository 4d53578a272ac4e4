"""The controller-manager and the generic controllers every installation runs."""
