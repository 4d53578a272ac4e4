"""pods/log, pods/exec and pods/attach of simulated containers, end to end: the real kubectl, the
Python client's ``stream()``, lightkube, kr8s and raw WebSockets of each channel protocol against
one `kplane serve` with its simulated nodes; authorization of the upgrade on a secure server."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import pty
import select
import subprocess
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from tests.conftest import Client
from tests.kubectl_cli import Kubectl
from tests.waiting import eventually, wait_until

PODS = """
apiVersion: v1
kind: ConfigMap
metadata: {name: app}
data: {app.conf: "mode=prod\\n"}
---
apiVersion: v1
kind: Pod
metadata: {name: shell, labels: {app: shell}}
spec:
  containers:
  - name: main
    image: busybox:1.36
    command: [sh, -c, "echo one; sleep 2; echo two >&2; sleep 3600"]
    env: [{name: GREETING, value: hello}]
    volumeMounts: [{name: cfg, mountPath: /etc/app}]
  - name: side
    image: nginx:1.25
  volumes: [{name: cfg, configMap: {name: app}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: told
  annotations: {log.kplane.io/app: "first line\\nsecond line\\nthird line"}
spec:
  containers: [{name: app, image: registry.local/app:2}]
---
apiVersion: v1
kind: Pod
metadata: {name: interactive}
spec:
  restartPolicy: Never
  containers: [{name: sh, image: busybox, stdin: true, tty: true, args: [sh]}]
---
apiVersion: v1
kind: Pod
metadata: {name: pulling}
spec:
  containers: [{name: c, image: "nginx:fail"}]
"""


@pytest.fixture(scope="module")
def pods(kubectl: Kubectl) -> Kubectl:
    kubectl.apply_file("apply", PODS)
    kubectl.run("wait", "--for=condition=Ready", "pod/shell", "pod/told", "pod/interactive", "--timeout=30s", timeout=40)
    return kubectl


def server_url(kubectl: Kubectl) -> str:
    return yaml.safe_load(Path(kubectl.env["KUBECONFIG"]).read_text())["clusters"][0]["cluster"]["server"]


# -- kubectl ------------------------------------------------------------------------------------------
def test_kubectl_exec_runs_the_containers_shell(pods: Kubectl) -> None:
    done = pods.run("exec", "shell", "-c", "main", "--", "sh", "-c",
                    "echo $GREETING $HOSTNAME; cat /etc/app/app.conf; ls /var/run/secrets/kubernetes.io/serviceaccount; "
                    "cat /nope; exit 3", check=False)
    assert done.returncode == 3
    assert done.stdout == "hello shell\nmode=prod\nnamespace\ntoken\n"  # no ca.crt: a plain HTTP server publishes no CA
    assert done.stderr == "cat: can't open '/nope': No such file or directory\ncommand terminated with exit code 3\n"
    assert pods.run("exec", "-i", "shell", "-c", "main", "--", "cat", stdin="from stdin\n").stdout == "from stdin\n"
    script = pods.run("exec", "-i", "shell", "-c", "main", "--", "sh", stdin="cd /etc\npwd\nexit 4\n", check=False)
    assert (script.returncode, script.stdout) == (4, "/etc\n")
    token = pods.run("exec", "shell", "-c", "main", "--", "cat", "/var/run/secrets/kubernetes.io/serviceaccount/token").stdout
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    assert claims["kubernetes.io"]["pod"]["name"] == "shell" and claims["sub"] == "system:serviceaccount:default:default"
    pending = pods.run("exec", "pulling", "--", "true", check=False)  # retried over SPDY, refused for the same reason
    assert pending.stderr == 'Error from server (BadRequest): container not found ("c")\n'
    missing = pods.run("exec", "shell", "-c", "main", "--", "nginx", check=False)
    assert (missing.returncode, missing.stderr) == (127, "sh: nginx: not found\ncommand terminated with exit code 127\n")


def test_kubectl_logs(pods: Kubectl) -> None:
    wait_until(lambda: "two" in pods.run("logs", "shell", "-c", "main").stdout, timeout=10, what="the second line")
    assert pods.run("logs", "shell", "-c", "main").stdout == "one\ntwo\n"
    assert pods.run("logs", "shell", "-c", "main", "--tail=1").stdout == "two\n"
    assert pods.run("logs", "shell", "-c", "main", "--limit-bytes=5").stdout == "one\nt"
    stamped = pods.run("logs", "shell", "-c", "main", "--timestamps").stdout.splitlines()
    first, second = (time.mktime(time.strptime(line.split()[0][:19], "%Y-%m-%dT%H:%M:%S")) for line in stamped)
    assert second - first == 2  # written after its sleep
    assert pods.run("logs", "shell", "-c", "main", "--since=1h").stdout == "one\ntwo\n"
    assert pods.run("logs", "told").stdout == "first line\nsecond line\nthird line\n"
    assert pods.run("logs", "shell", "-c", "side").stdout.startswith("nginx:1.25: the entrypoint started in container side")
    many = pods.run("logs", "shell")  # kubectl picks the first container itself
    assert (many.stdout, many.stderr) == ("one\ntwo\n", 'Defaulted container "main" out of: main, side\n')
    previous = pods.run("logs", "shell", "-c", "main", "--previous", check=False)
    assert previous.stderr == 'Error from server (BadRequest): previous terminated container "main" in pod "shell" not found\n'


def test_kubectl_logs_follow_writes_lines_when_they_are_written(pods: Kubectl) -> None:
    pods.run("run", "ticker", "--image=busybox", "--", "sh", "-c", "echo start; sleep 1; echo tick; sleep 3600")
    pods.run("wait", "--for=condition=Ready", "pod/ticker", "--timeout=30s", timeout=40)
    follow = subprocess.Popen(["kubectl", "logs", "-f", "ticker"], stdout=subprocess.PIPE, text=True, env=pods.env)
    try:
        assert follow.stdout is not None
        assert follow.stdout.readline() == "start\n"
        assert follow.stdout.readline() == "tick\n"
        assert follow.poll() is None  # the container still runs: so does the follow
    finally:
        follow.kill()
        follow.wait()


def terminal(kubectl: Kubectl, *args: str, script: list[tuple[str, str]]) -> tuple[str, int]:
    """kubectl run on a pseudo-terminal, as a person types: each text is sent once the screen
    shows what precedes it; the whole screen and the exit code."""
    master, slave = pty.openpty()
    running = subprocess.Popen(["kubectl", *args], stdin=slave, stdout=slave, stderr=slave, env=kubectl.env, close_fds=True)
    os.close(slave)
    screen = b""
    deadline = time.monotonic() + 30

    def more() -> bool:
        nonlocal screen
        ready, _, _ = select.select([master], [], [], max(0.0, deadline - time.monotonic()))
        try:
            chunk = os.read(master, 4096) if ready else b""
        except OSError:  # the terminal closed: kubectl is done
            chunk = b""
        screen += chunk
        return bool(chunk)

    try:
        for shown, typed in script:
            while shown.encode() not in screen:
                assert more(), screen
            os.write(master, typed.encode())
        while more():
            pass
        return screen.decode(), running.wait(timeout=15)
    finally:
        os.close(master)
        if running.poll() is None:
            running.kill()


def test_kubectl_exec_and_run_on_a_terminal(pods: Kubectl) -> None:
    screen, code = terminal(pods, "exec", "-it", "shell", "-c", "main", "--", "sh",
                            script=[("/ # ", "echo hi there\r"), ("hi there\r\n/ # ", "cd /etc; cat hostname\r"),
                                    ("shell\r\n/etc # ", "exit 3\r")])
    assert screen == ("/ # echo hi there\r\nhi there\r\n/ # cd /etc; cat hostname\r\nshell\r\n/etc # exit 3\r\n"
                      "command terminated with exit code 3\r\n")
    assert code == 3
    screen, code = terminal(pods, "run", "-it", "--rm", "once", "--image=busybox", "--restart=Never", "--", "sh",
                            script=[("/ # ", "echo inside\r"), ("inside\r\n/ # ", "exit 4\r")])
    assert code == 4 and 'pod "once" deleted' in screen


def test_hostile_scripts_end_with_the_shells_error(pods: Kubectl) -> None:
    """Scripts that would spin or grow without bound in the server's event loop end with the
    shell's message and exit code 2, in the kubelet (the pod's status, its log) as in an exec."""
    pods.run("run", "hang", "--image=busybox", "--restart=Never", "--command", "--", "sh", "-c", "while do done")
    terminated = wait_until(lambda: ((pods.json("get", "pod", "hang")["status"].get("containerStatuses") or [{}])[0]
                                     .get("state", {}).get("terminated")), timeout=20, what="the container to end")
    assert (terminated["exitCode"], terminated["reason"]) == (2, "Error")
    assert pods.run("logs", "hang").stdout == 'sh: syntax error: unexpected "do"\n'
    doubling = "a=xxxxxxxx; for i in " + " ".join(map(str, range(24))) + "; do a=$a$a; done; echo $a"
    done = pods.run("exec", "shell", "-c", "main", "--", "sh", "-c", doubling, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (
        2, "", "sh: out of memory (a shell holds at most 1048576 bytes in variables and words)\n"
               "command terminated with exit code 2\n")
    assert pods.run("exec", "shell", "-c", "main", "--", "printf", "%%", "x").stdout == "%"


# -- the client libraries -------------------------------------------------------------------------------
def test_python_client_stream(pods: Kubectl) -> None:
    from kubernetes import client, config
    from kubernetes.stream import stream

    api = client.CoreV1Api(config.new_client_from_config(pods.env["KUBECONFIG"]))
    ws = stream(api.connect_get_namespaced_pod_exec, "shell", "default", container="main", stdout=True, stderr=True,
                command=["sh", "-c", "echo out; echo err >&2; exit 6"], stdin=False, tty=False, _preload_content=False)
    ws.run_forever(timeout=10)
    assert (ws.read_stdout(), ws.read_stderr(), ws.returncode) == ("out\n", "err\n", 6)
    assert stream(api.connect_get_namespaced_pod_exec, "shell", "default", container="main", command=["hostname"],
                  stdout=True, stderr=True, stdin=False, tty=False) == "shell\n"
    tty = stream(api.connect_get_namespaced_pod_exec, "shell", "default", container="main", command=["sh"],
                 stdout=True, stderr=False, stdin=True, tty=True, _preload_content=False)
    tty.write_stdin("echo hi\r")
    tty.write_stdin("exit 4\r")
    tty.run_forever(timeout=10)
    assert tty.read_stdout() == "/ # echo hi\r\nhi\r\n/ # exit 4\r\n"
    assert tty.returncode == 4
    assert api.read_namespaced_pod_log("told", "default", tail_lines=2) == "second line\nthird line\n"


def test_python_client_attach_to_an_interactive_main_process(pods: Kubectl) -> None:
    from kubernetes import client, config
    from kubernetes.stream import stream

    api = client.CoreV1Api(config.new_client_from_config(pods.env["KUBECONFIG"]))
    ws = stream(api.connect_get_namespaced_pod_attach, "interactive", "default", stdout=True, stderr=False, stdin=True,
                tty=True, _preload_content=False)
    ws.write_stdin("echo attached\r")
    ws.write_stdin("exit 2\r")
    ws.run_forever(timeout=10)
    assert "attached\r\n" in ws.read_stdout() and ws.returncode == 0  # attach ends well; the code is the container's
    status = wait_until(lambda: pods.json("get", "pod", "interactive")["status"], timeout=10,
                        what="the pod's status").get("containerStatuses")
    terminated = wait_until(lambda: pods.json("get", "pod", "interactive")["status"]["containerStatuses"][0]["state"].get("terminated"),
                            timeout=10, what="the container to end")
    assert status is not None and (terminated["exitCode"], terminated["reason"]) == (2, "Error")
    assert pods.json("get", "pod", "interactive")["status"]["phase"] == "Failed"


def test_lightkube_and_kr8s_exec(pods: Kubectl) -> None:
    import kr8s
    from lightkube import Client, KubeConfig

    light = Client(config=KubeConfig.from_file(pods.env["KUBECONFIG"]))
    answer = light.exec("shell", namespace="default", container="main", command=["sh", "-c", "cat; exit 2"],
                        stdin="via lightkube", stdout=True, stderr=True)
    assert (answer.stdout, answer.exit_code) == ("via lightkube", 2)
    assert list(light.log("told", namespace="default")) == ["first line\n", "second line\n", "third line\n"]

    async def with_kr8s() -> tuple[bytes, int]:
        api = await kr8s.asyncio.api(kubeconfig=pods.env["KUBECONFIG"])
        pod = await kr8s.asyncio.objects.Pod.get("told", namespace="default", api=api)
        done = await pod.exec(["sh", "-c", "echo kr8s; exit 5"], check=False)
        return done.stdout, done.returncode

    assert asyncio.run(with_kr8s()) == (b"kr8s\n", 5)


# -- the channel protocols, on the wire --------------------------------------------------------------------
EXEC = "/api/v1/namespaces/default/pods/shell/exec?container=main&stdout=true&stderr=true"


async def talk(url: str, query: str, protocols: tuple[str, ...], sent: list[bytes | str] = ()) -> tuple[str | None, list[Any]]:
    """The agreed subprotocol and every message the server sent, after sending ``sent``."""
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(url + EXEC + query, protocols=protocols) as ws:
            for message in sent:
                await (ws.send_bytes(message) if isinstance(message, bytes) else ws.send_str(message))
            return ws.protocol, [m.data async for m in ws]


@pytest.mark.parametrize(("protocols", "agreed", "framing", "error"), [
    (("v5.channel.k8s.io", "v4.channel.k8s.io"), "v5.channel.k8s.io", "binary", "status"),
    (("nope.k8s.io", "v4.channel.k8s.io"), "v4.channel.k8s.io", "binary", "status"),
    (("v4.base64.channel.k8s.io",), "v4.base64.channel.k8s.io", "base64", "status"),
    (("v3.channel.k8s.io",), "v3.channel.k8s.io", "binary", "text"),
    (("base64.channel.k8s.io",), "base64.channel.k8s.io", "base64", "text"),
    ((), None, "binary", "text"),
])
def test_each_channel_protocol(pods: Kubectl, protocols: tuple[str, ...], agreed: str | None, framing: str,
                               error: str) -> None:
    command = "&command=sh&command=-c&command=echo%20out%3B%20echo%20err%20%3E%262%3B%20exit%207"
    protocol, messages = asyncio.run(talk(server_url(pods), command, protocols))
    assert protocol == agreed
    if framing == "base64":
        frames = [(int(m[0]), base64.b64decode(m[1:])) for m in messages]
    else:
        frames = [(m[0], m[1:]) for m in messages]
    assert frames[:3] == [(1, b""), (1, b"out\n"), (2, b"err\n")]  # the first, empty, says the stream is open
    channel, body = frames[3]
    assert channel == 3 and len(frames) == 4
    if error == "status":
        assert json.loads(body) == {"metadata": {}, "status": "Failure", "reason": "NonZeroExitCode",
                                    "message": "command terminated with non-zero exit code: command terminated with exit code 7",
                                    "details": {"causes": [{"reason": "ExitCode", "message": "7"}]}}
    else:
        assert body == b"command terminated with non-zero exit code: command terminated with exit code 7"


def test_a_terminal_line_holds_at_most_4095_bytes(pods: Kubectl) -> None:
    """As Linux's line discipline: what is typed past the line's room is dropped, not held."""
    _, messages = asyncio.run(talk(server_url(pods), "&stdin=true&tty=true&command=cat", ("v5.channel.k8s.io",),
                                   [b"\x00" + b"x" * 5000 + b"\r", b"\x00\x04"]))
    assert b"".join(m[1:] for m in messages if m[:1] == b"\x01") == b"x" * 4095 + b"\r\n" + b"x" * 4095 + b"\r\n"


def test_v5_closes_stdin_and_v4_reports_success(pods: Kubectl) -> None:
    url = server_url(pods)
    protocol, messages = asyncio.run(talk(url, "&stdin=true&command=cat", ("v5.channel.k8s.io",),
                                          [b"\x00piped ", b"\x04" + b'{"Width":80,"Height":24}', b"\x00in", b"\xff\x00"]))
    assert protocol == "v5.channel.k8s.io"
    assert messages == [b"\x01", b"\x01piped ", b"\x01in", b'\x03{"metadata":{},"status":"Success"}']
    _, messages = asyncio.run(talk(url, "&command=true", ("v4.channel.k8s.io",)))
    assert messages[-1] == b'\x03{"metadata":{},"status":"Success"}'


async def statuses(url: str, requests: list[tuple[str, str, dict[str, str]]]) -> list[tuple[int, str]]:
    found = []
    async with aiohttp.ClientSession() as session:
        for method, path, headers in requests:
            async with session.request(method, url + path, headers=headers) as reply:
                body = await reply.json(content_type=None)
                found.append((reply.status, body["message"]))
    return found


def test_refusals_are_statuses(pods: Kubectl) -> None:
    ws = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
    answers = asyncio.run(statuses(server_url(pods), [
        ("POST", EXEC + "&command=ls", {"Connection": "Upgrade", "Upgrade": "SPDY/3.1", "X-Stream-Protocol-Version": "v4.channel.k8s.io"}),
        ("POST", EXEC + "&command=ls", {}),
        ("GET", EXEC + "&command=ls", {**ws, "Sec-WebSocket-Protocol": "v9.channel.k8s.io"}),
        ("GET", "/api/v1/namespaces/default/pods/shell/exec?container=main&command=ls", ws),
        ("GET", EXEC, ws),
        ("GET", "/api/v1/namespaces/default/pods/shell/exec?stdout=true&command=ls", ws),
        ("GET", "/api/v1/namespaces/default/pods/shell/log?container=main&tailLines=-1", {}),
        ("GET", "/api/v1/namespaces/default/pods/shell/log?container=main&sinceSeconds=5&sinceTime=2024-01-01T00:00:00Z", {}),
        ("GET", "/api/v1/namespaces/default/pods/shell/log?container=main&limitBytes=x", {}),
        ("GET", "/api/v1/namespaces/default/pods/shell/log?container=main&sinceSeconds=" + "9" * 400, {}),
        ("GET", "/api/v1/namespaces/default/pods/shell/log?container=main&tailLines=9223372036854775808", {}),
        ("GET", "/api/v1/namespaces/default/pods/shell/log?container=main&limitBytes=%201", {}),
        ("GET", "/api/v1/namespaces/default/pods/nope/log", {}),
        ("GET", "/api/v1/namespaces/default/pods/shell/log", {}),
    ]))
    assert answers == [
        (400, "unable to upgrade connection: SPDY/3.1 is not served; use a WebSocket (v5.channel.k8s.io)"),
        (400, "Upgrade request required"),
        (400, "requested protocol(s) are not supported: ['v9.channel.k8s.io']; supports ['v5.channel.k8s.io', "
              "'v4.channel.k8s.io', 'v4.base64.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', "
              "'channel.k8s.io', 'base64.channel.k8s.io']"),
        (400, "you must specify at least 1 of stdin, stdout, stderr"),
        (400, "you must specify at least one command for the container"),
        (400, "a container name must be specified for pod shell, choose one of: [main side]"),
        (422, 'PodLogOptions "shell" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0'),
        (422, 'PodLogOptions "shell" is invalid: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified'),
        (400, 'strconv.ParseInt: parsing "x": invalid syntax'),
        (400, f'strconv.ParseInt: parsing "{"9" * 400}": value out of range'),
        (400, 'strconv.ParseInt: parsing "9223372036854775808": value out of range'),
        (400, 'strconv.ParseInt: parsing " 1": invalid syntax'),
        (404, 'pods "nope" not found'),
        (400, "a container name must be specified for pod shell, choose one of: [main side]"),
    ]


# -- authorization ------------------------------------------------------------------------------------------
@pytest.mark.secure
async def test_the_websocket_upgrade_needs_create_on_pods_exec(api: Client, server: Any) -> None:
    """A GET upgrade is authorized as ``get``, and also as ``create`` (kube 1.35's compound check)."""
    await api.post("/api/v1/namespaces/default/pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                                                       "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "exec"},
            "rules": [{"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["get"]}]}
    assert (await api.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", role)).status == 201
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "exec"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "exec"},
               "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}]}
    assert (await api.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", binding)).status == 201
    ws = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
          "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol": "v5.channel.k8s.io", "Impersonate-User": "alice"}
    path = "/api/v1/namespaces/default/pods/p/exec?stdout=true&command=ls"
    refused = await api.get(path, headers=ws)
    assert (refused.status, refused.body["message"]) == (
        403, 'pods "p" is forbidden: User "alice" cannot create resource "pods/exec" in API group "" in the namespace "default"')
    role["rules"][0]["verbs"] = ["get", "create"]
    assert (await api.put("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/exec", role)).status == 200

    async def allowed() -> bool:
        reply = await api.get(path, headers=ws)
        return (reply.status, reply.body["message"]) == (400, "pod p does not have a host assigned")

    await eventually(allowed)
