"""`kplane serve` that cannot start says why in one line on stderr and exits 1, without a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.servers import free_port


def serve(data_dir: Path, *args: str) -> str:
    """Run `kplane serve` expecting it to fail at start-up; its one line of complaint."""
    done = subprocess.run([sys.executable, "-m", "kplane.core.cli", "serve", "--port", "0", "--no-controllers",
                           "--data-dir", str(data_dir), *args], capture_output=True, text=True, timeout=30)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("kplane:")]
    assert len(said) == 1 and said == done.stderr.splitlines()[-1:], done.stderr
    assert "kplane is serving" not in done.stdout
    return said[0]


def test_a_corrupt_database(tmp_path: Path) -> None:
    (tmp_path / "state.db").write_bytes(b"this is not SQLite, " * 400)
    assert serve(tmp_path) == f"kplane: cannot open the database {tmp_path / 'state.db'}: file is not a database"


def test_a_data_dir_that_is_a_file_or_under_one(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    assert serve(tmp_path / "file") == f"kplane: cannot use the data dir {tmp_path / 'file'}: Not a directory"
    assert serve(tmp_path / "file" / "x") == f"kplane: cannot use the data dir {tmp_path / 'file' / 'x'}: Not a directory"


def test_a_database_where_a_file_is_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    database = tmp_path / "file" / "state.db"
    assert serve(tmp_path / "data", "--storage", f"sqlite://{database}") == \
        f"kplane: cannot open the database {database}: Not a directory"


def test_a_kubeconfig_that_cannot_be_written(tmp_path: Path) -> None:
    (tmp_path / "kubeconfig").mkdir(mode=0o700)
    assert serve(tmp_path) == f"kplane: cannot write the kubeconfig {tmp_path / 'kubeconfig'}: Is a directory"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into any folder")
def test_a_data_dir_that_is_not_writable(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o500)
    assert serve(data_dir) == f"kplane: the data dir {data_dir} is not writable"


@pytest.mark.parametrize(("url", "said"), [
    ("etcd://[bad", "kplane: malformed storage URL 'etcd://[bad': Invalid IPv6 URL"),
    ("etcd://host:port", "kplane: storage URL 'etcd://host:port': bad etcd endpoint 'host:port': "
                         "Port could not be cast to integer value as 'port'"),
    ("etcd://host:70000", "kplane: storage URL 'etcd://host:70000': bad etcd endpoint 'host:70000': Port out of range 0-65535"),
    ("etcd://:2379", "kplane: storage URL 'etcd://:2379': bad etcd endpoint ':2379' (expected host:port)"),
    ("etcds://127.0.0.1:2379?ca=/no/such/ca.pem",
     "kplane: storage URL 'etcds://127.0.0.1:2379?ca=/no/such/ca.pem': the ca file '/no/such/ca.pem' does not exist"),
    ("sqlite://", "kplane: storage URL 'sqlite://' names no database file"),
    ("sqlite:///tmp/x.db?shared=yes",
     "kplane: storage URL 'sqlite:///tmp/x.db?shared=yes': the only query parameter is shared=true or shared=false"),
    ("sqlite:///tmp/x.db?mode=ro",
     "kplane: storage URL 'sqlite:///tmp/x.db?mode=ro': the only query parameter is shared=true or shared=false"),
])
def test_a_malformed_storage_url(tmp_path: Path, url: str, said: str) -> None:
    assert serve(tmp_path, "--storage", url) == said


def test_a_ca_file_that_is_not_pem(tmp_path: Path) -> None:
    (tmp_path / "ca.pem").write_text("not a certificate")
    url = f"etcds://127.0.0.1:2379?ca={tmp_path / 'ca.pem'}"
    assert serve(tmp_path, "--storage", url) == f"kplane: storage URL {url!r}: unusable TLS files: no certificate or crl found"


def test_an_unreachable_etcd(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    said = serve(tmp_path, "--storage", f"etcd://127.0.0.1:{port}")
    assert said.startswith("kplane: no etcd endpoint accepts connections: Cannot connect to host 127.0.0.1:")
