"""The discovery.k8s.io controllers: the EndpointSlice controller."""
