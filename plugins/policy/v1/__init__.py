"""policy/v1: the stable version, and the storage version of the group."""
