"""The CRD controllers apiextensions-apiserver runs in the API server's own process, here too (so
a server without a controller-manager serves CRDs): clients of the server's loopback, as every
controller is.

* :mod:`.naming` - ``status.acceptedNames`` and ``NamesAccepted`` (name conflicts in a group);
* :mod:`.establishing` - ``Established`` once the names are accepted;
* :mod:`.finalizer` - the ``customresourcecleanup`` finalizer: a deleted CRD's objects go first.
"""
