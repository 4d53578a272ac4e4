"""The volume controllers: the binder (with the simulated provisioner) and the protection of
claims and volumes in use."""
