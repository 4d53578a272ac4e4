"""Port-forwarding and the proxy subresources against one real `kplane serve` with simulated
nodes: `kubectl port-forward` (SPDY/3.1 tunnelled over a WebSocket) and `kubectl proxy`, the
Python client's `portforward()` (the v4 channel protocol), a SPDY client of the test's own for
what kubectl never sends (a pod that is not running, bad streams, pings), and plain HTTP for
pods/proxy, services/proxy and nodes/proxy."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import urllib.request
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest

from kplane.plugins.core.containers.endpoint import Connection
from kplane.plugins.core.portforward import spdy
from tests.conftest import Client
from tests.kubectl_cli import Kubectl
from tests.waiting import eventually, wait_until

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client, config  # noqa: E402
from kubernetes.stream import portforward  # noqa: E402

PODS = "/api/v1/namespaces/default/pods"
SERVICES = "/api/v1/namespaces/default/services"
MANIFEST = """
apiVersion: v1
kind: Pod
metadata: {name: solo, labels: {app: solo}}
spec:
  containers:
  - {name: app, image: nginx:1.25, ports: [{name: http, containerPort: 8080}]}
---
apiVersion: v1
kind: Pod
metadata: {name: stuck}
spec:
  nodeName: no-such-node
  containers: [{name: app, image: nginx:1.25}]
---
apiVersion: v1
kind: Pod
metadata: {name: unplaced}
spec:
  nodeSelector: {nowhere: "true"}
  containers: [{name: app, image: nginx:1.25}]
---
apiVersion: v1
kind: Service
metadata: {name: solo}
spec:
  selector: {app: solo}
  ports:
  - {name: web, port: 80, targetPort: http}
  - {name: other, port: 81, targetPort: 9090}
---
apiVersion: v1
kind: Service
metadata: {name: empty}
spec:
  selector: {app: nobody}
  ports: [{port: 80}]
"""


@pytest.fixture(scope="module")
def cluster(kubectl: Kubectl) -> Kubectl:
    kubectl.apply_file("apply", MANIFEST)
    kubectl.run("wait", "--for=condition=Ready", "pod/solo", "--timeout=30s")
    return kubectl


@pytest.fixture(scope="module")
def url(cluster: Kubectl) -> str:
    server = cluster.json("config", "view", "--minify")["clusters"][0]["cluster"]["server"]
    assert server.startswith("http://")
    return server


@pytest.fixture
async def http(url: str) -> Iterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(base_url=url) as session:
        yield session


@pytest.fixture(scope="module")
def core(cluster: Kubectl) -> client.CoreV1Api:
    return client.CoreV1Api(config.new_client_from_config(config_file=cluster.env["KUBECONFIG"]))


@pytest.fixture
def forwarding(cluster: Kubectl) -> Iterator[Any]:
    """Runs `kubectl port-forward ARGS` and yields the local port of each remote port."""
    started: list[subprocess.Popen[str]] = []

    def forward(*args: str) -> list[int]:
        process = subprocess.Popen(["kubectl", "port-forward", *args], env=cluster.env, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        started.append(process)
        ports: list[int] = []
        remotes = [a for a in args if ":" in a and "/" not in a]
        while len(ports) < len(remotes) * 2:  # kubectl prints an IPv4 and an IPv6 line each
            line = process.stdout.readline() if process.stdout else ""
            assert line, process.communicate(timeout=5)
            found = re.match(r"Forwarding from (\S+):(\d+) -> \d+", line)
            assert found, line
            ports.append(int(found.group(2)))
        return ports[::2]

    yield forward
    for process in started:
        process.terminate()
        process.communicate(timeout=10)


def http_get(port: int, path: str) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as reply:
        assert reply.status == 200
        return reply.read().decode()


def read_until(sock: socket.socket, end: bytes) -> bytes:
    data = b""
    while not data.endswith(end):
        chunk = sock.recv(4096)
        assert chunk, data
        data += chunk
    return data


def echo(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
        return received


# -- the endpoint and the framing alone -------------------------------------------------------------
def test_the_endpoint_answers_http_and_echoes_the_rest() -> None:
    pod = {"metadata": {"namespace": "ns", "name": "p"}, "status": {"podIP": "10.0.0.9"}}
    web = Connection(pod, 80)
    assert web.receive(b"GE") == b""  # not enough to tell yet
    first = web.receive(b"T /a HTTP/1.1\r\nHost: x\r\n\r\nHEAD /b HTTP/1.1\r\n\r\n")
    assert first.count(b"HTTP/1.1 200 OK") == 2 and b"pod ns/p (IP 10.0.0.9) port 80\nGET /a\n" in first
    assert first.endswith(b"\r\n\r\n") and not web.closed  # HEAD: no body; keep-alive
    closing = web.receive(b"POST /c HTTP/1.1\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc")
    assert b"Connection: close" in closing and b"POST /c" in closing and web.closed
    assert Connection(pod, 80).receive(b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").startswith(b"HTTP/1.1 411")
    assert Connection(pod, 80).receive(b"GET /" + b"x" * 20000).startswith(b"HTTP/1.1 431")
    raw = Connection(pod, 5432)
    assert raw.receive(b"hello\n") == b"hello\n" and raw.receive(b"GET / HTTP/1.1\r\n\r\n") == b"GET / HTTP/1.1\r\n\r\n"
    partial = Connection(pod, 1)
    assert partial.receive(b"AB") == b"" and partial.finish() == b"AB" and partial.closed


def test_spdy_frames_survive_any_split() -> None:
    codec_out, codec_in = spdy.HeaderCodec(), spdy.HeaderCodec()
    frames = [spdy.Frame(spdy.SYN_STREAM, stream_id=1, headers={"port": ["80"], "streamtype": ["error"]}),
              spdy.Frame(0, stream_id=1, flags=spdy.FLAG_FIN, data=b"x" * 5000),
              spdy.Frame(spdy.SYN_STREAM, stream_id=3, headers={"port": ["80"], "streamtype": ["data"]}),
              spdy.Frame(spdy.PING, value=7), spdy.Frame(spdy.RST_STREAM, stream_id=3, status=spdy.CANCEL)]
    wire = b"".join(spdy.encode(frame, codec_out) for frame in frames)
    reader = spdy.FrameReader(codec_in)
    got = [frame for at in range(0, len(wire), 7) for frame in reader.feed(wire[at : at + 7])]
    assert got == frames
    with pytest.raises(spdy.ProtocolError, match="larger than"):
        spdy.FrameReader(spdy.HeaderCodec()).feed(b"\x80\x03\x00\x01\x00\xff\xff\xff")
    with pytest.raises(spdy.ProtocolError, match="does not inflate"):
        spdy.FrameReader(spdy.HeaderCodec()).feed(b"\x80\x03\x00\x01\x00\x00\x00\x0e\x00\x00\x00\x01" + b"\x00" * 6 + b"\xff" * 4)


# -- kubectl ------------------------------------------------------------------------------------------
def test_kubectl_port_forward_reaches_the_pod(cluster: Kubectl, forwarding: Any) -> None:
    web, raw = forwarding("pod/solo", ":80", ":5432")
    assert http_get(web, "/hello").startswith("Hello from the simulated pod default/solo (IP 10.244.")
    assert "port 80\nGET /again?x=1\n" in http_get(web, "/again?x=1")  # a second connection on the same session
    assert echo(raw, b"ping\n" * 10000) == b"ping\n" * 10000  # larger than one frame each way
    svc, = forwarding("service/solo", ":80")  # kubectl resolves the Service's targetPort: the pod's 8080
    assert "port 8080\nGET /\n" in http_get(svc, "/")


def test_kubectl_proxy_reaches_a_service(cluster: Kubectl) -> None:
    process = subprocess.Popen(["kubectl", "proxy", "--port=0"], env=cluster.env, text=True, stdout=subprocess.PIPE)
    try:
        line = process.stdout.readline() if process.stdout else ""
        port = int(re.search(r":(\d+)", line).group(1))  # type: ignore[union-attr]
        assert "port 8080\nGET /x/y?q=1\n" in http_get(port, f"{SERVICES}/solo:web/proxy/x/y?q=1")
        assert http_get(port, "/api/v1/nodes/kplane-node-1/proxy/healthz") == "ok"
    finally:
        process.terminate()
        process.communicate(timeout=10)


# -- the Python client ----------------------------------------------------------------------------------
def test_python_client_portforward(core: client.CoreV1Api) -> None:
    forwarded = portforward(core.connect_get_namespaced_pod_portforward, "solo", "default", ports="80,7000")
    try:
        sock = forwarded.socket(80)
        sock.settimeout(10)
        for path in ("/py", "/again"):  # two requests on one connection, kept alive
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: solo\r\n\r\n".encode())
            answer = read_until(sock, f"GET {path}\n".encode())
            assert answer.startswith(b"HTTP/1.1 200 OK") and b"pod default/solo" in answer
        assert forwarded.error(80) is None
        other = forwarded.socket(7000)
        other.settimeout(10)
        other.sendall(b"echo me")
        assert read_until(other, b"me") == b"echo me"
    finally:
        forwarded.close()


def test_python_client_hears_why_a_port_is_not_forwarded(core: client.CoreV1Api) -> None:
    forwarded = portforward(core.connect_get_namespaced_pod_portforward, "stuck", "default", ports="80")
    try:
        error = wait_until(lambda: forwarded.error(80), what="the error channel")
        assert re.fullmatch(r"error forwarding port 80 to pod stuck, uid [0-9a-f-]+: the pod is Pending, not Running", error)
    finally:
        forwarded.close()


# -- refusals before any stream -----------------------------------------------------------------------
@pytest.mark.parametrize(("path", "headers", "code", "message"), [
    (f"{PODS}/solo/portforward?ports=80", {}, 400, "Upgrade request required"),
    (f"{PODS}/unplaced/portforward?ports=80", {}, 400, "pod unplaced does not have a host assigned"),
    (f"{PODS}/nope/portforward?ports=80", {}, 404, 'pods "nope" not found'),
    (f"{PODS}/solo/portforward", {"Upgrade": "websocket", "Connection": "Upgrade"}, 400, 'query parameter "ports" is required'),
    (f"{PODS}/solo/portforward?ports=80,0", {"Upgrade": "websocket", "Connection": "Upgrade"}, 400, "unable to parse '0' as a port"),
    (f"{PODS}/solo/portforward?ports=80", {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Protocol": "v9.x"},
     400, "requested protocol(s) are not supported"),
])
async def test_refusals_are_statuses(http: aiohttp.ClientSession, path: str, headers: dict[str, str], code: int,
                                     message: str) -> None:
    async with http.get(path, headers=headers) as reply:
        body = await reply.json()
    assert (reply.status, body["kind"], body["code"]) == (code, "Status", code)
    assert body["message"].startswith(message)


# -- SPDY over a WebSocket, as a client of the test's own ---------------------------------------------
class SpdyClient:
    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws, self.codec = ws, spdy.HeaderCodec()
        self.reader = spdy.FrameReader(self.codec)

    async def send(self, *frames: spdy.Frame) -> None:
        for frame in frames:
            await self.ws.send_bytes(spdy.encode(frame, self.codec))

    async def frames(self, count: int) -> list[spdy.Frame]:
        got: list[spdy.Frame] = []
        while len(got) < count:
            message = await self.ws.receive(timeout=10)
            assert message.type == aiohttp.WSMsgType.BINARY, message
            got += self.reader.feed(message.data)
        return got


def syn(sid: int, **headers: str) -> spdy.Frame:
    return spdy.Frame(spdy.SYN_STREAM, stream_id=sid, headers={k: [v] for k, v in headers.items()})


async def test_spdy_streams_of_a_pod_that_is_not_running(http: aiohttp.ClientSession) -> None:
    async with http.ws_connect(f"{PODS}/stuck/portforward", protocols=("SPDY/3.1+portforward.k8s.io",)) as ws:
        peer = SpdyClient(ws)
        await peer.send(spdy.Frame(spdy.PING, value=1), spdy.Frame(spdy.PING, value=2),
                        syn(1, port="80", streamtype="error", requestid="0"), syn(3, port="80", streamtype="data", requestid="0"),
                        syn(5, port="http", streamtype="data", requestid="1"), syn(7, port="80", streamtype="stdin"))
        got = await peer.frames(8)
        assert [(f.kind, f.value) for f in got if f.kind == spdy.PING] == [(spdy.PING, 1)]  # only the client's is echoed
        assert [(f.stream_id, f.status) for f in got if f.kind == spdy.RST_STREAM] == [(5, spdy.CANCEL), (7, spdy.CANCEL)]
        assert {f.stream_id for f in got if f.kind == spdy.SYN_REPLY} == {1, 3}
        data = [f for f in got if f.kind == 0]
        assert data[0].stream_id == 1 and b"the pod is Pending, not Running" in data[0].data
        assert {(f.stream_id, f.fin, f.data) for f in data[1:]} == {(3, True, b""), (1, True, b"")}
        await peer.send(syn(1, port="80", streamtype="error"))  # a stream id used again breaks SPDY
        goaway, = await peer.frames(1)
        assert (goaway.kind, goaway.status) == (spdy.GOAWAY, spdy.GOAWAY_PROTOCOL_ERROR)
        assert (await ws.receive(timeout=10)).type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)


# -- the proxies ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("method", "path", "code", "expected"), [
    ("GET", f"{PODS}/solo/proxy/", 200, "port 8080\nGET /\n"),  # the first declared port
    ("POST", f"{PODS}/solo:9000/proxy/a/b/?q=1", 200, "port 9000\nPOST /a/b/?q=1\n"),
    ("GET", f"{PODS}/https:solo:443/proxy/x", 200, "port 443\nGET /x\n"),
    ("GET", f"{PODS}/solo:http/proxy/", 503, "error trying to reach service: dial tcp 10.244."),
    ("GET", f"{PODS}/stuck/proxy/", 400, "address not allowed"),
    ("GET", f"{PODS}/a:b:c:d/proxy/", 400, "invalid pod request 'a:b:c:d'"),
    ("GET", f"{SERVICES}/solo/proxy/", 503, 'no endpoints available for service "solo"'),  # both ports are named
    ("GET", f"{SERVICES}/solo:80/proxy/z", 200, "port 8080\nGET /z\n"),  # number 80 is the port named web
    ("DELETE", f"{SERVICES}/solo:web/proxy/z", 200, "port 8080\nDELETE /z\n"),
    ("GET", f"{SERVICES}/solo:other/proxy/", 200, "port 9090\nGET /\n"),
    ("GET", f"{SERVICES}/solo:82/proxy/", 503, 'no service port 82 found for service "solo"'),
    ("GET", f"{SERVICES}/empty/proxy/", 503, 'no endpoints available for service "empty"'),
    ("GET", f"{SERVICES}/nope/proxy/", 404, 'services "nope" not found'),
    ("GET", "/api/v1/nodes/kplane-node-2/proxy/healthz", 200, "ok"),
    ("GET", "/api/v1/nodes/kplane-node-2/proxy/configz", 200, '{"kubeletconfig": {"enableServer": true, "port": 10250'),
    ("GET", "/api/v1/nodes/kplane-node-2/proxy/pods", 404, "404 page not found\n"),
    ("GET", "/api/v1/nodes/kplane-node-2:22/proxy/", 503, "error trying to reach service: dial tcp"),
])
async def test_proxies(http: aiohttp.ClientSession, method: str, path: str, code: int, expected: str) -> None:
    async with http.request(method, path, data=b"ignored" if method == "POST" else None) as reply:
        text = await reply.text()
    assert reply.status == code, text
    if reply.content_type == "application/json" and code != 200:  # a Status, from the server itself
        status = json.loads(text)
        assert (status["kind"], status["code"]) == ("Status", code)
        text = status["message"]
    assert expected in text


async def test_the_bare_proxy_path_is_redirected(http: aiohttp.ClientSession) -> None:
    async with http.get(f"{PODS}/solo/proxy?x=1", allow_redirects=False) as reply:
        assert (reply.status, reply.headers["Location"]) == (301, "proxy/?x=1")
    async with http.get(f"{PODS}/solo/proxy?x=1") as followed:
        assert followed.status == 200 and "GET /?x=1\n" in await followed.text()
    async with http.post(f"{PODS}/solo/proxy") as posted:  # only GET and HEAD are redirected
        assert posted.status == 200 and "POST /\n" in await posted.text()
    async with http.head(f"{SERVICES}/solo:web/proxy/") as head:
        assert head.status == 200 and await head.read() == b""
    async with http.get(f"{PODS}/solo/status/extra") as below:  # only proxies serve what is below them
        assert below.status == 404


# -- authorization ------------------------------------------------------------------------------------------
@pytest.mark.secure
async def test_the_websocket_upgrade_needs_create_on_pods_portforward(api: Client, server: Any) -> None:
    """A GET upgrade is authorized as ``get`` and also as ``create``, as kube 1.35's (and as exec's)."""
    await api.post(PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                          "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "forward"},
            "rules": [{"apiGroups": [""], "resources": ["pods/portforward"], "verbs": ["get"]}]}
    assert (await api.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", role)).status == 201
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "forward"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "forward"},
               "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}]}
    assert (await api.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", binding)).status == 201
    ws = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
          "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol": "v4.channel.k8s.io",
          "Impersonate-User": "alice"}
    path = f"{PODS}/p/portforward?ports=80"
    refused = await api.get(path, headers=ws)
    assert (refused.status, refused.body["message"]) == (
        403, 'pods "p" is forbidden: User "alice" cannot create resource "pods/portforward" in API group "" '
             'in the namespace "default"')
    role["rules"][0]["verbs"] = ["get", "create"]
    assert (await api.put("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/forward", role)).status == 200

    async def allowed() -> bool:
        reply = await api.get(path, headers=ws)
        return (reply.status, reply.body["message"]) == (400, "pod p does not have a host assigned")

    await eventually(allowed)
