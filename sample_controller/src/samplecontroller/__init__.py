"""kubernetes/sample-controller, for kplane.

Two parts, as in the original: the Foo API (``samplecontroller.k8s.io/v1alpha1``), which the original
adds to a cluster with a CustomResourceDefinition and this package adds to kplane as a plugin
(:mod:`samplecontroller.plugin`); and the controller, a process of its own
(:mod:`samplecontroller.main`, :mod:`samplecontroller.controller`) that keeps one Deployment per Foo.
"""

GROUP = "samplecontroller.k8s.io"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "Foo"
PLURAL = "foos"
