"""The simulated container's shell, files and main process, run as the API server runs them:
scripts in virtual time (what a container's log is made of) and their exit codes."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from kplane.plugins.core.containers import files
from kplane.plugins.core.containers.process import main_process
from kplane.plugins.core.containers.shell import (MAX_MEMORY, MAX_STEPS, MAX_WRITTEN, STEP_BYTES, Context, ImageProcess,
                                                  Read, Shell, Sleep, Write)


def drive(run: Any, stdin: list[bytes] | None = None) -> tuple[bytes, bytes, int | None, float]:
    """(stdout, stderr, exit code or None for never, virtual seconds) of a run."""
    out, err, clock, sent = b"", b"", 0.0, None
    chunks = list(stdin or [])
    while True:
        try:
            event = run.send(sent)
        except StopIteration as done:
            return out, err, done.value, clock
        sent = None
        if isinstance(event, Write):
            out, err = (out + event.data, err) if event.stream == 1 else (out, err + event.data)
        elif isinstance(event, Sleep):
            if event.seconds is None:
                return out, err, None, clock
            clock += event.seconds
        elif isinstance(event, Read):
            sent = chunks.pop(0) if chunks else None
        elif isinstance(event, ImageProcess):
            sent = 0


def context() -> Context:
    return Context(env={"PATH": "/bin", "HOME": "/root", "GREETING": "hello  world"},
                   files={"/etc/hostname": b"web\n", "/etc/config/app.conf": b"mode=prod\n", "/tmp/": b""}, hostname="web")


@pytest.mark.parametrize(("script", "stdout", "stderr", "code", "seconds"), [
    ("echo hi; echo $GREETING \"$GREETING\" '$GREETING'", "hi\nhello world hello  world $GREETING\n", "", 0, 0),
    ("exit 3", "", "", 3, 0),
    ("false || echo no && echo yes; false && echo never", "no\nyes\n", "", 1, 0),
    ("for i in 1 2 3; do echo $i; sleep 1; done; echo done", "1\n2\n3\ndone\n", "", 0, 3),
    ("sleep 1m; sleep 0.5", "", "", 0, 60.5),
    ("cat /etc/hostname /missing; echo rc=$?", "web\nrc=1\n", "cat: can't open '/missing': No such file or directory\n", 0, 0),
    ("ls /etc; ls /etc/config/app.conf", "config\nhostname\n/etc/config/app.conf\n", "", 0, 0),
    ('x=5; if [ "$x" -gt 3 ]; then echo big; elif true; then echo mid; else echo small; fi', "big\n", "", 0, 0),
    ("n=0; while [ $n != 2 ]; do echo $n; n=2; done; until true; do echo never; done", "0\n", "", 0, 0),
    ("echo err >&2; echo out 2>&1; echo gone >/dev/null", "out\n", "err\n", 0, 0),
    ("echo a > /tmp/f; echo b >> /tmp/f; cat < /tmp/f", "a\nb\n", "", 0, 0),
    ('sh -c "echo inner \\$0 \\$1; exit 4" me you; echo $?', "inner me you\n4\n", "", 0, 0),
    ("printenv GREETING; printenv NOPE", "hello  world\n", "", 1, 0),
    ("pwd; cd /etc; pwd; cat hostname; cd /nope", "/\n/etc\nweb\n", "sh: cd: can't cd to /nope: No such file or directory\n", 2, 0),
    ("echo -n a; echo -e 'b\\tc'; printf '%s=%d\\n' n 7", "ab\tc\nn=7\n", "", 0, 0),
    ("nginx -g 'daemon off;'", "", "sh: nginx: not found\n", 127, 0),
    ("echo a | cat", "", "sh: pipes are not supported by this shell\n", 2, 0),
    ("echo $(hostname)", "", "sh: command substitution $(...) is not supported by this shell\n", 2, 0),
    ('echo "open', "", "sh: syntax error: unterminated quoted string\n", 2, 0),
    ("if true; then echo x", "", 'sh: syntax error: unexpected end of file (expecting "fi")\n', 2, 0),
    ("sleep infinity; echo never", "", "", None, 0),
    ("sleep -1", "", "sleep: invalid number '-1'\n", 1, 0),
    ("while do done", "", 'sh: syntax error: unexpected "do"\n', 2, 0),
    ("until false; do\ndone", "", 'sh: syntax error: unexpected "done"\n', 2, 0),
    ("if true; then fi", "", 'sh: syntax error: unexpected "fi"\n', 2, 0),
    ("printf %% x; printf '%s,' a b; printf 'no format\\n' c", "%a,b,no format\n", "", 0, 0),
])
def test_scripts(script: str, stdout: str, stderr: str, code: int | None, seconds: float) -> None:
    assert drive(Shell(context()).run_script(script)) == (stdout.encode(), stderr.encode(), code, seconds)


def test_stdin_feeds_cat_and_an_interactive_shell() -> None:
    assert drive(Shell(context()).run_argv(["cat"]), [b"abc", b"def"]) == (b"abcdef", b"", 0, 0)
    out, _, code, _ = drive(Shell(context()).run_argv(["sh"]), [b"echo one\nech", b"o two\nexit 5\necho never\n"])
    assert (out, code) == (b"one\ntwo\n", 5)


def test_a_loop_that_never_sleeps_is_bounded() -> None:
    out, _, code, _ = drive(Shell(context()).run_script("while true; do echo y; done"))
    assert code is None and out.count(b"y\n") < MAX_STEPS


POD: dict[str, Any] = {
    "metadata": {"name": "web-0", "namespace": "shop", "uid": "u-1", "labels": {"app": "web", "tier": "front"},
                 "annotations": {}},
    "spec": {"hostname": "web-0", "subdomain": "web", "restartPolicy": "Always", "containers": [],
             "hostAliases": [{"ip": "10.1.2.3", "hostnames": ["db", "db.local"]}],
             "dnsConfig": {"nameservers": ["1.1.1.1"], "options": [{"name": "ndots", "value": "2"}]},
             "volumes": [{"name": "info", "downwardAPI": {"items": [
                 {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
                 {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}}]}},
                 {"name": "cfg", "configMap": {"name": "app", "items": [{"key": "app.conf", "path": "conf/app.conf"}]}}]},
    "status": {"podIP": "10.244.1.7"},
}


def test_files_are_made_as_the_kubelet_makes_them() -> None:
    container = {"name": "c", "volumeMounts": [{"name": "info", "mountPath": "/etc/info"},
                                               {"name": "cfg", "mountPath": "/etc/app.conf", "subPath": "conf/app.conf"}]}
    made = files.container_files(POD, container, files.Sources(configmaps={"app": {"app.conf": b"x=1\n"}}, dns_ip="10.96.0.10"))
    assert made["/etc/hostname"] == b"web-0\n"
    assert made["/etc/hosts"].decode().endswith(
        "10.244.1.7\tweb-0.web.shop.svc.cluster.local\tweb-0\n\n# Entries added by HostAliases.\n10.1.2.3\tdb\tdb.local\n")
    assert made["/etc/resolv.conf"] == (b"search shop.svc.cluster.local svc.cluster.local cluster.local\n"
                                        b"nameserver 10.96.0.10\nnameserver 1.1.1.1\noptions ndots:2\n")
    assert made["/etc/info/labels"] == b'app="web"\ntier="front"\n'
    assert made["/etc/info/name"] == b"web-0"
    assert made["/etc/app.conf"] == b"x=1\n"


def test_environment_has_references_fields_and_service_links() -> None:
    container = {"name": "c", "env": [
        {"name": "A", "value": "one"}, {"name": "B", "value": "$(A)-two $$(A) $(MISSING)"},
        {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "KEY", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "k"}}}],
        "envFrom": [{"prefix": "S_", "secretRef": {"name": "s"}}]}
    service = {"metadata": {"name": "my-db"}, "spec": {"clusterIP": "10.96.4.4", "ports": [{"name": "pg", "port": 5432}]}}
    env = files.container_env(POD, container, files.Sources(configmaps={"app": {"k": b"v"}}, secrets={"s": {"pw": b"p"}},
                                                            services=[service]))
    assert list(env)[:2] == ["PATH", "HOSTNAME"] and list(env)[-1] == "HOME"
    assert {k: env[k] for k in ("HOSTNAME", "A", "B", "POD", "KEY", "S_pw")} == {
        "HOSTNAME": "web-0", "A": "one", "B": "one-two $(A) $(MISSING)", "POD": "web-0", "KEY": "v", "S_pw": "p"}
    assert {k: v for k, v in env.items() if k.startswith("MY_DB")} == {
        "MY_DB_SERVICE_HOST": "10.96.4.4", "MY_DB_SERVICE_PORT": "5432", "MY_DB_SERVICE_PORT_PG": "5432",
        "MY_DB_PORT": "tcp://10.96.4.4:5432", "MY_DB_PORT_5432_TCP": "tcp://10.96.4.4:5432", "MY_DB_PORT_5432_TCP_PROTO": "tcp",
        "MY_DB_PORT_5432_TCP_PORT": "5432", "MY_DB_PORT_5432_TCP_ADDR": "10.96.4.4"}


def pod(restart: str = "Always", **annotations: str) -> dict[str, Any]:
    return {**POD, "metadata": {**POD["metadata"], "annotations": annotations}, "spec": {**POD["spec"], "restartPolicy": restart}}


def test_a_command_is_the_main_process() -> None:
    container = {"name": "c", "image": "busybox", "env": [{"name": "WHO", "value": "world"}],
                 "command": ["sh", "-c"], "args": ["echo hello $(WHO); sleep 5; echo bye >&2; exit 3"]}
    ran = main_process(pod(), container, default_seconds=10)
    assert (ran.exit_code, ran.seconds) == (3, 5)
    assert [(o.seconds, o.stream, o.data) for o in ran.output] == [(0, 1, b"hello world\n"), (5, 2, b"bye\n")]
    assert main_process(pod(), {"name": "c", "image": "busybox", "command": ["sleep", "3600"]}, default_seconds=1).exit_code == 0
    assert main_process(pod(), {"name": "c", "image": "busybox", "command": ["sleep", "infinity"]}, default_seconds=1).exit_code is None


def test_the_image_process_writes_its_lines_and_exits_as_its_tag_says() -> None:
    nginx = main_process(pod(), {"name": "web", "image": "nginx:1.25"}, default_seconds=10)
    assert (nginx.exit_code, [o.data for o in nginx.output]) == (
        None, [b"nginx:1.25: the entrypoint started in container web of pod shop/web-0\n"])
    failing = main_process(pod(**{"kplane.io/run-seconds": "2", "log.kplane.io/app": "one\ntwo"}),
                           {"name": "app", "image": "app:exit-4", "command": ["/server", "--port=80"]}, default_seconds=10)
    assert (failing.exit_code, failing.seconds) == (4, 2)
    assert [(o.seconds, o.data) for o in failing.output] == [(0, b"one\n"), (0, b"two\n"), (2, b"exiting with code 4\n")]
    job = main_process(pod("Never"), {"name": "c", "image": "busybox", "args": ["sh", "-c", "echo x; work; echo y"]},
                       default_seconds=7)
    assert (job.exit_code, job.seconds, job.output[-1].seconds, job.output[-1].data) == (0, 7, 7, b"y\n")


def test_every_round_of_a_loop_is_a_step() -> None:
    """Loops whose lists run no simple command (a ``for`` over nothing) still reach the bound."""
    out, err, code, _ = drive(Shell(context()).run_script(
        "while for i in; do :; done; do for i in $NOPE; do :; done; done; echo never"))
    assert (out, err, code) == (b"", b"", None)


DOUBLINGS = "a=xxxxxxxx; for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16"
DOUBLED = DOUBLINGS + "; do a=$a$a; done"  # 512 KiB
OUT_OF_MEMORY = f"out of memory (a shell holds at most {MAX_MEMORY} bytes in variables and words)\n"


@pytest.mark.parametrize(("script", "stdout", "stderr"), [
    (DOUBLINGS + " 17 18 19 20 21 22 23 24; do a=$a$a; done; echo $a", "", "sh: " + OUT_OF_MEMORY),  # 128 MiB
    (DOUBLED + "; b=$a", "", "sh: " + OUT_OF_MEMORY),  # the variables together
    (DOUBLED + "; echo $a$a$a > /dev/null", "", "sh: " + OUT_OF_MEMORY),  # one word
    (DOUBLED + "; echo $a $a $a > /dev/null", "", "sh: " + OUT_OF_MEMORY),  # the argument list
    (DOUBLED + "; printf \"$a%s\" 1 2 3 > /dev/null", "", "sh: " + OUT_OF_MEMORY),  # the format again and again
    (DOUBLED + "; export a; sh -c 'b=$a'; echo $?", "2\n", "sh: " + OUT_OF_MEMORY),  # a child's count with its parent's
    (DOUBLED + "; unset a; b=$i$i; sh -c 'b=$0$0' $b; echo $?; export b; sh -c 'c=$b'; echo $?", "0\n0\n", ""),
])
def test_memory_is_bounded(script: str, stdout: str, stderr: str) -> None:
    assert drive(Shell(context()).run_script(script)) == (stdout.encode(), stderr.encode(), 2 if stderr and not stdout else 0, 0)


def test_the_kubelet_and_logs_see_the_shells_error() -> None:
    ran = main_process(pod("Never"), {"name": "c", "image": "busybox", "command": ["sh", "-c", DOUBLINGS + " 17; do a=$a$a; done"]},
                       default_seconds=1)
    assert (ran.exit_code, [(o.stream, o.data) for o in ran.output]) == (2, [(2, ("sh: " + OUT_OF_MEMORY).encode())])
    hang = main_process(pod("Never"), {"name": "c", "image": "busybox", "command": ["sh", "-c", "while do done"]},
                        default_seconds=1)
    assert (hang.exit_code, [o.data for o in hang.output]) == (2, [b'sh: syntax error: unexpected "do"\n'])


def test_shells_share_their_depth_steps_and_written_files() -> None:
    assert drive(Shell(context()).run_script('echo "sh /s" > /s; sh /s')) == (
        b"", b"/s: the script nests deeper than 32\n", 2, 0)
    line = "x" * 1000
    out, err, code, _ = drive(Shell(context()).run_script(f'while sh -c "echo {line} >> /tmp/log"; do :; done; echo $?'))
    assert (out, err, code) == (b"0\n", f"sh: the files written hold more than {MAX_WRITTEN} bytes\n".encode(), 0)
    out, _, code, _ = drive(Shell(context()).run_script("sh -c 'while :; do :; done'; echo never"))
    assert (out, code) == (b"", None)


def test_a_recursion_error_is_the_shells_error() -> None:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    run = Shell(context()).run_script("if true; then " * 20 + "echo deep" + "; fi" * 20)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 40)
    try:
        ran = drive(run)
    finally:
        sys.setrecursionlimit(limit)
    assert ran == (b"", b"sh: the script nests too deeply\n", 2, 0)


@pytest.mark.parametrize("script", [
    DOUBLED + "; while :; do echo $a; done",  # output: each STEP_BYTES a step
    DOUBLED + '; while :; do test -n "$a"; done',  # expansions likewise
])
def test_work_is_bounded_by_the_steps(script: str) -> None:
    out, _, code, _ = drive(Shell(context()).run_script(script))
    assert code is None and len(out) <= MAX_STEPS * STEP_BYTES


def test_a_line_of_stdin_is_bounded() -> None:
    assert drive(Shell(context()).run_argv(["sh"]), [b"x" * 40_000, b"y" * 40_000, b"\necho never\n"]) == (
        b"", b"sh: a line is longer than 65536 bytes\n", 2, 0)
