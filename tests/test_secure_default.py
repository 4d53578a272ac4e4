"""`kplane serve` with no flags, as `make serve` runs it: HTTPS, RBAC, anonymous requests limited
to what the bootstrap policy grants them, the kubeconfig's admin allowed everything."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.servers import free_port, probe_context, wait_ready


def _anonymous(url: str) -> tuple[int, dict | str]:
    try:
        with urllib.request.urlopen(url, timeout=5, context=probe_context()) as reply:
            text = reply.read().decode()
            return reply.status, json.loads(text) if text.startswith("{") else text
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
def test_the_default_server_is_https_and_rbac(tmp_path: Path) -> None:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "kplane.core.cli", "serve", "--port", str(port),
                                "--data-dir", str(tmp_path / "data"), "--no-controllers"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"https://127.0.0.1:{port}"
    try:
        wait_ready(url, process)
        assert _anonymous(f"{url}/version")[0] == 200  # system:public-info-viewer
        assert _anonymous(f"{url}/healthz") == (200, "ok")
        status, body = _anonymous(f"{url}/api/v1/namespaces/default/secrets")
        assert status == 403 and body["message"] == ('secrets is forbidden: User "system:anonymous" cannot list '
                                                     'resource "secrets" in API group "" in the namespace "default"')
        status, body = _anonymous(f"{url}/apis")  # discovery is for authenticated users only, as in kube
        assert status == 403 and body["message"] == 'forbidden: User "system:anonymous" cannot get path "/apis"'
        env = {**os.environ, "KUBECONFIG": str(tmp_path / "data" / "kubeconfig"), "HOME": str(tmp_path)}
        done = subprocess.run(["kubectl", "auth", "can-i", "delete", "secrets", "--all-namespaces"],
                              capture_output=True, text=True, env=env, timeout=30)
        assert (done.returncode, done.stdout.strip()) == (0, "yes"), done.stderr
        done = subprocess.run(["kubectl", "auth", "whoami", "-o", "jsonpath={.status.userInfo.username} "
                               "{.status.userInfo.groups}"], capture_output=True, text=True, env=env, timeout=30)
        assert done.stdout == 'kplane-admin ["system:masters","system:authenticated"]', done.stderr
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=10)
    assert "can read and change everything" not in stderr


def test_plain_http_allows_everything_and_says_so(tmp_path: Path) -> None:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "kplane.core.cli", "serve", "--port", str(port), "--http",
                                "--data-dir", str(tmp_path / "data"), "--no-controllers"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, process)
        with urllib.request.urlopen(f"{url}/api/v1/namespaces/default/secrets", timeout=5) as reply:
            assert reply.status == 200
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=10)
    assert "--authorization-mode AlwaysAllow: anyone on this machine can read and change everything" in stderr


def test_rbac_needs_its_plugin(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "kplane.core.cli", "serve", "--port", str(free_port()),
                           "--data-dir", str(tmp_path / "data"), "--plugins", "sample_api"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "--authorization-mode names modes no plugin offers: RBAC" in done.stderr
    assert "Traceback" not in done.stderr
