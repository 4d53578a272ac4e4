"""core/v1: the only version of the core group."""
