"""``pods/portforward``: a client's connections to a pod's ports, each reaching the simulated
endpoint behind it (:mod:`kplane.plugins.core.containers.endpoint`).

Two protocols, as the kubelet speaks them: the WebSocket channel protocol (``v4.channel.k8s.io``
and its base64 form, :mod:`.channels`: the ports are the query's, two channels each, what the
Python client's ``portforward()`` speaks), and SPDY/3.1 (:mod:`.spdy`, :mod:`.session`: a pair of
streams per connection, created by the client as it accepts local connections), which kubectl
1.32 tunnels over a WebSocket (subprotocol ``SPDY/3.1+portforward.k8s.io``). :mod:`.serving` is
the subresource choosing between them; :mod:`.forward` opens a pod's port for both.
"""
