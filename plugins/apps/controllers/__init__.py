"""Controllers of the apps group, registered through ``kplane_register_controllers``."""
