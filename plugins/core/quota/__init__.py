"""Resource quotas: what an object uses (:mod:`.usage`, shared by the admission and the
controller) and the ResourceQuota admission (:mod:`.admission`)."""
