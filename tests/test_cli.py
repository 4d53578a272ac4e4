"""`kplane serve` as a user runs it: start-up, kubeconfig, signals, restarts, one server per data dir."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import yaml

from tests.servers import free_port, start, wait_ready

STARTS = 30  # seconds a `kplane serve` may take to start, or to stop, on a loaded two-worker run


def request(url: str, method: str = "GET", body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as reply:
        return json.loads(reply.read())


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_serve_writes_kubeconfig_and_stops_cleanly(tmp_path: Path, stop_signal: signal.Signals) -> None:
    port = free_port()
    process = start(tmp_path, port=port)
    try:
        took = wait_ready(f"http://127.0.0.1:{port}", process)
        print(f"ready after {took:.2f}s")
    finally:
        process.send_signal(stop_signal)
        out, err = process.communicate(timeout=STARTS)
    assert process.returncode == 0, err
    assert f"export KUBECONFIG={(tmp_path / 'kubeconfig').resolve()}" in out
    config = yaml.safe_load((tmp_path / "kubeconfig").read_text())
    assert config["clusters"][0]["cluster"]["server"] == f"http://127.0.0.1:{port}"
    assert config["current-context"] == "kplane"
    assert "Traceback" not in err


def test_state_survives_a_restart_and_a_data_dir_has_one_server(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = start(tmp_path, port=port)
    try:
        wait_ready(url, process)
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kept"}, "data": {"a": "b"}}
        created = request(f"{url}/api/v1/namespaces/default/configmaps", "POST", cm)
        second = start(tmp_path)
        _, err = second.communicate(timeout=STARTS)
        assert second.returncode == 1 and "in use by another process" in err
    finally:
        process.terminate()
        process.communicate(timeout=STARTS)
    process = start(tmp_path, port=port)
    try:
        wait_ready(url, process)
        again = request(f"{url}/api/v1/namespaces/default/configmaps/kept")
        assert again["metadata"]["uid"] == created["metadata"]["uid"]
        assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    finally:
        process.terminate()
        process.communicate(timeout=STARTS)


def test_version_command() -> None:
    out = subprocess.run([sys.executable, "-m", "kplane.core.cli", "version"], capture_output=True, text=True, check=True).stdout
    assert "1.32" in out


def test_unknown_storage_url_is_a_clear_error(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "kplane.core.cli", "serve", "--port", "0", "--data-dir", str(tmp_path),
                           "--storage", "mysql://x"], capture_output=True, text=True, timeout=20)
    assert done.returncode == 1 and "unsupported storage URL" in done.stderr and "Traceback" not in done.stderr
