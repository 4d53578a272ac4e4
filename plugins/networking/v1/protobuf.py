"""Protobuf table of networking.k8s.io/v1 Ingress (``k8s.io/api`` v0.32 ``networking/v1/generated.proto``),
for ``kubectl create ingress``, which sends its body as protobuf."""

from __future__ import annotations

from kplane.api import OBJECT_META, Field, Message

SERVICE_BACKEND_PORT = Message("ServiceBackendPort", {1: Field("name", "string"), 2: Field("number", "int32")})
INGRESS_SERVICE_BACKEND = Message("IngressServiceBackend", {1: Field("name", "string"), 2: Field("port", SERVICE_BACKEND_PORT)})
TYPED_LOCAL_OBJECT_REFERENCE = Message(
    "TypedLocalObjectReference",
    {1: Field("apiGroup", "string", pointer=True), 2: Field("kind", "string"), 3: Field("name", "string")},
)
INGRESS_BACKEND = Message(
    "IngressBackend",
    {4: Field("service", INGRESS_SERVICE_BACKEND, pointer=True), 3: Field("resource", TYPED_LOCAL_OBJECT_REFERENCE, pointer=True)},
)
HTTP_INGRESS_PATH = Message(
    "HTTPIngressPath",
    {1: Field("path", "string"), 3: Field("pathType", "string", pointer=True), 2: Field("backend", INGRESS_BACKEND)},
)
HTTP_INGRESS_RULE_VALUE = Message("HTTPIngressRuleValue", {1: Field("paths", HTTP_INGRESS_PATH, repeated=True)})
INGRESS_RULE_VALUE = Message("IngressRuleValue", {1: Field("http", HTTP_INGRESS_RULE_VALUE, pointer=True)})
INGRESS_RULE = Message("IngressRule", {1: Field("host", "string"), 2: Field("ingressRuleValue", INGRESS_RULE_VALUE, inline=True)})
INGRESS_TLS = Message("IngressTLS", {1: Field("hosts", "string", repeated=True), 2: Field("secretName", "string")})
INGRESS_SPEC = Message(
    "IngressSpec",
    {
        4: Field("ingressClassName", "string", pointer=True),
        1: Field("defaultBackend", INGRESS_BACKEND, pointer=True),
        2: Field("tls", INGRESS_TLS, repeated=True),
        3: Field("rules", INGRESS_RULE, repeated=True),
    },
)
INGRESS_PORT_STATUS = Message(
    "IngressPortStatus",
    {1: Field("port", "int32"), 2: Field("protocol", "string"), 3: Field("error", "string", pointer=True)},
)
INGRESS_LOAD_BALANCER_INGRESS = Message(
    "IngressLoadBalancerIngress",
    {1: Field("ip", "string"), 2: Field("hostname", "string"), 4: Field("ports", INGRESS_PORT_STATUS, repeated=True)},
)
INGRESS_LOAD_BALANCER_STATUS = Message("IngressLoadBalancerStatus", {1: Field("ingress", INGRESS_LOAD_BALANCER_INGRESS, repeated=True)})
INGRESS_STATUS = Message("IngressStatus", {1: Field("loadBalancer", INGRESS_LOAD_BALANCER_STATUS)})
INGRESS = Message("Ingress", {1: Field("metadata", OBJECT_META), 2: Field("spec", INGRESS_SPEC), 3: Field("status", INGRESS_STATUS)})
