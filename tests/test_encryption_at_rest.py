"""Encryption at rest (``--encryption-provider-config``), judged by what the backends really hold:
the rows of SQLite's state.db and the keys of a real etcd, decrypted here with the formats
Kubernetes documents, and what the API, a watch and kubectl give back."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sqlite3
import subprocess
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from kplane.core.serving.apiserver import APIServer
from kplane.core.storage.encryptionconfig import EncryptionConfigError, load_encryption_config
from tests.builders import configmap
from tests.conftest import Client
from tests.etcd_process import EtcdProcess
from tests.storage.test_etcd import raw_range
from tests.servers import server_config, serving
from tests.test_startup_errors import serve

SECRETS = "/api/v1/namespaces/default/secrets"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
PASSWORD = "hunter2-plaintext-password"
SECRET_KEY = "/registry/core/secrets/default/db"
KEY1, KEY2 = os.urandom(32), os.urandom(32)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def provider(kind: str, *keys: tuple[str, bytes]) -> dict[str, Any]:
    if kind == "identity":
        return {"identity": {}}
    return {kind: {"keys": [{"name": name, "secret": b64(secret)} for name, secret in keys]}}


def config_file(path: Path, *providers: dict[str, Any], resources: list[str] | None = None) -> Path:
    document = {"apiVersion": "apiserver.config.k8s.io/v1", "kind": "EncryptionConfiguration",
                "resources": [{"resources": resources or ["secrets"], "providers": list(providers)}]}
    path.write_text(json.dumps(document))
    return path


def secret(name: str = "db") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "stringData": {"password": PASSWORD}}


def sqlite_value(data_dir: Path, key: str) -> bytes:
    """The value row of ``key`` in the server's state.db, read with sqlite3 beside the server."""
    with sqlite3.connect(f"file:{data_dir / 'state.db'}?mode=ro", uri=True) as conn:
        (value,) = conn.execute("SELECT value FROM current WHERE key = ?", (key,)).fetchone()
    return bytes(value)


def decrypt(stored: bytes, kind: str, name: str, key: bytes, storage_key: str) -> dict[str, Any]:
    """Kubernetes' formats, undone with ``cryptography`` directly: aesgcm is a 12-byte nonce, the
    ciphertext and tag, with the storage key as authenticated data; aescbc a 16-byte IV and
    PKCS#7-padded ciphertext."""
    prefix = f"k8s:enc:{kind}:v1:{name}:".encode()
    assert stored.startswith(prefix), stored[:40]
    body = stored[len(prefix):]
    if kind == "aesgcm":
        plain = AESGCM(key).decrypt(body[:12], body[12:], storage_key.encode())
    else:
        decryptor = Cipher(algorithms.AES(key), modes.CBC(body[:16])).decryptor()
        unpadder = padding.PKCS7(128).unpadder()
        plain = unpadder.update(decryptor.update(body[16:]) + decryptor.finalize()) + unpadder.finalize()
    return json.loads(plain)


def the_password(obj: dict[str, Any]) -> str:
    return base64.b64decode(obj["data"]["password"]).decode()


async def start(data_dir: Path, encryption: Path | None, storage_url: str = "", *, watch_cache: bool = True) -> APIServer:
    server = APIServer(server_config(data_dir=data_dir, storage_url=storage_url, port=0, run_controllers=False,
                                    watch_cache=watch_cache, encryption_provider_config=encryption))
    await server.start()
    return server


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
        yield session


def client(session: aiohttp.ClientSession, server: APIServer) -> Client:
    class Bound(Client):
        async def request(self, method: str, path: str, body: Any = None, **kw: Any) -> Any:
            return await super().request(method, server.url + path, body, **kw)
    return Bound(session)


# -- what the backends hold ------------------------------------------------------------------------

@pytest.mark.parametrize("watch_cache", [True, False], ids=["watch-cache", "no-watch-cache"])
async def test_a_secret_is_stored_encrypted_in_sqlite_and_read_back_through_the_api(
        tmp_path: Path, session: aiohttp.ClientSession, watch_cache: bool) -> None:
    config = config_file(tmp_path / "enc.yaml", provider("aescbc", ("key1", KEY1)))
    server = await start(tmp_path / "data", config, watch_cache=watch_cache)
    api = client(session, server)
    try:
        watch = await session.get(server.url + SECRETS, params={"watch": "1"})
        assert (await api.post(SECRETS, secret())).status == 201
        assert (await api.post(CONFIGMAPS, configmap("plain", {"note": PASSWORD}))).status == 201
        stored = sqlite_value(tmp_path / "data", SECRET_KEY)
        assert stored.startswith(b"k8s:enc:aescbc:v1:key1:")
        assert PASSWORD.encode() not in stored and b64(PASSWORD.encode()).encode() not in stored
        assert the_password(decrypt(stored, "aescbc", "key1", KEY1, SECRET_KEY)) == PASSWORD
        # ConfigMaps are not configured: stored as they are
        assert sqlite_value(tmp_path / "data", "/registry/core/configmaps/default/plain").startswith(b'{"apiVersion":"v1"')
        got = await api.get(f"{SECRETS}/db")
        assert got.status == 200 and the_password(got.body) == PASSWORD
        listed = await api.get(SECRETS)
        assert [the_password(item) for item in listed.body["items"]] == [PASSWORD]
        event = json.loads(await asyncio.wait_for(watch.content.readline(), 10))
        assert event["type"] == "ADDED" and the_password(event["object"]) == PASSWORD
        watch.close()
        # an update (compare-and-swap on the decrypted value) writes a fresh ciphertext
        got.body["data"]["extra"] = b64(b"more")
        replaced = await api.put(f"{SECRETS}/db", got.body)
        assert replaced.status == 200, replaced
        updated = decrypt(sqlite_value(tmp_path / "data", SECRET_KEY), "aescbc", "key1", KEY1, SECRET_KEY)
        assert base64.b64decode(updated["data"]["extra"]) == b"more"
    finally:
        await server.stop()


async def test_a_secret_is_stored_encrypted_in_etcd(tmp_path: Path, etcd_server: EtcdProcess,
                                                    session: aiohttp.ClientSession) -> None:
    prefix = f"/kplane-{uuid.uuid4().hex[:8]}"
    config = config_file(tmp_path / "enc.yaml", provider("aesgcm", ("key1", KEY1)))
    server = await start(tmp_path / "data", config, f"etcd://127.0.0.1:{etcd_server.client_port}{prefix}")
    api = client(session, server)
    try:
        assert (await api.post(SECRETS, secret())).status == 201
        assert (await api.post(CONFIGMAPS, configmap("plain"))).status == 201
        (kv,) = await raw_range(etcd_server.endpoint, prefix + SECRET_KEY)
        stored = base64.b64decode(kv["value"])
        assert stored.startswith(b"k8s:enc:aesgcm:v1:key1:") and PASSWORD.encode() not in stored
        # the authenticated data is the key as kplane names it (without the URL's etcd prefix)
        assert the_password(decrypt(stored, "aesgcm", "key1", KEY1, SECRET_KEY)) == PASSWORD
        (plain,) = await raw_range(etcd_server.endpoint, prefix + "/registry/core/configmaps/default/plain")
        assert base64.b64decode(plain["value"]).startswith(b'{"apiVersion":"v1"')
        got = await api.get(f"{SECRETS}/db")
        assert got.status == 200 and the_password(got.body) == PASSWORD
    finally:
        await server.stop()


PROVIDERS = ["aesgcm", "aescbc", "identity", "secretbox"]


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_each_provider_writes_its_own_format(tmp_path: Path, session: aiohttp.ClientSession, kind: str) -> None:
    config = config_file(tmp_path / "enc.yaml", provider(kind, ("k", KEY1)), resources=["*."])
    server = await start(tmp_path / "data", config)
    api = client(session, server)
    try:
        assert (await api.post(SECRETS, secret())).status == 201
        stored = sqlite_value(tmp_path / "data", SECRET_KEY)
        if kind == "identity":
            assert stored.startswith(b'{"apiVersion":"v1"')
        else:
            assert stored.startswith(f"k8s:enc:{kind}:v1:k:".encode()) and PASSWORD.encode() not in stored
        if kind in ("aesgcm", "aescbc"):
            assert the_password(decrypt(stored, kind, "k", KEY1, SECRET_KEY)) == PASSWORD
        got = await api.get(f"{SECRETS}/db")
        assert got.status == 200 and the_password(got.body) == PASSWORD
    finally:
        await server.stop()


async def test_a_value_copied_to_another_key_does_not_decrypt(tmp_path: Path, session: aiohttp.ClientSession) -> None:
    """AES-GCM authenticates the storage key: a ciphertext moved under another name is refused,
    as a 500 naming that key; the server, the other Secrets and ConfigMaps carry on."""
    config = config_file(tmp_path / "enc.yaml", provider("aesgcm", ("key1", KEY1)))
    server = await start(tmp_path / "data", config)
    api = client(session, server)
    try:
        assert (await api.post(SECRETS, secret())).status == 201
        assert (await api.post(SECRETS, secret("other"))).status == 201
    finally:
        await server.stop()
    # below the API, in the database: the ciphertext of "db" under the key of "other"
    db = sqlite_value(tmp_path / "data", SECRET_KEY)
    with sqlite3.connect(tmp_path / "data" / "state.db") as conn:
        conn.execute("UPDATE current SET value = ? WHERE key = ?", (db, "/registry/core/secrets/default/other"))
    server = await start(tmp_path / "data", config)
    api = client(session, server)
    try:
        broken = await api.get(f"{SECRETS}/other")
        assert broken.status == 500 and broken.body["reason"] == "InternalError", broken
        assert 'unable to transform key "/registry/core/secrets/default/other"' in broken.body["message"]
        assert "cipher: message authentication failed" in broken.body["message"]
        listed = await api.get(SECRETS)
        assert listed.status == 500 and "/registry/core/secrets/default/other" in listed.body["message"]
        assert the_password((await api.get(f"{SECRETS}/db")).body) == PASSWORD
        assert (await api.post(CONFIGMAPS, configmap("still-fine"))).status == 201
        assert (await api.get("/readyz")).status == 200
    finally:
        await server.stop()


async def test_a_watch_gets_an_error_for_an_event_it_cannot_decrypt(tmp_path: Path, etcd_server: EtcdProcess,
                                                                     session: aiohttp.ClientSession) -> None:
    """Two servers on one etcd with different keys: a Secret one writes is an ERROR event (500)
    on the other's watch, which ends, as kube-apiserver's does; the server serves on."""
    url = f"etcd://127.0.0.1:{etcd_server.client_port}/kplane-{uuid.uuid4().hex[:8]}"
    first = await start(tmp_path / "a", config_file(tmp_path / "a.yaml", provider("aesgcm", ("k", KEY1))), url)
    second = await start(tmp_path / "b", config_file(tmp_path / "b.yaml", provider("aesgcm", ("k", KEY2))), url)
    try:
        watch = await session.get(first.url + SECRETS, params={"watch": "1"})
        assert (await client(session, second).post(SECRETS, secret())).status == 201
        event = json.loads(await asyncio.wait_for(watch.content.readline(), 10))
        assert event["type"] == "ERROR" and event["object"]["code"] == 500, event
        assert event["object"]["message"] == ('Internal error occurred: unable to transform key '
                                              '"/registry/core/secrets/default/db": cipher: message authentication failed')
        assert await asyncio.wait_for(watch.content.read(), 10) == b""
        assert (await client(session, first).post(CONFIGMAPS, configmap("fine"))).status == 201
    finally:
        await first.stop()
        await second.stop()


async def test_without_the_configuration_an_encrypted_value_is_an_error_for_that_object(
        tmp_path: Path, session: aiohttp.ClientSession) -> None:
    data = tmp_path / "data"
    server = await start(data, config_file(tmp_path / "enc.yaml", provider("aescbc", ("key1", KEY1))))
    try:
        assert (await client(session, server).post(SECRETS, secret())).status == 201
    finally:
        await server.stop()
    server = await start(data, None)
    api = client(session, server)
    try:
        got = await api.get(f"{SECRETS}/db")
        assert got.status == 500 and got.body["message"] == (
            'Internal error occurred: unable to transform key "/registry/core/secrets/default/db": '
            "identity transformer tried to read encrypted data")
        assert (await api.get(SECRETS)).status == 500
        assert (await api.post(SECRETS, secret("plain"))).status == 201
        assert (await api.get(f"{SECRETS}/plain")).status == 200
    finally:
        await server.stop()


# -- key rotation ----------------------------------------------------------------------------------

async def test_rotation_reads_old_values_and_a_rewrite_re_encrypts_with_the_new_first_key(
        tmp_path: Path, session: aiohttp.ClientSession) -> None:
    data = tmp_path / "data"
    server = await start(data, config_file(tmp_path / "one.yaml", provider("aescbc", ("key1", KEY1))))
    try:
        assert (await client(session, server).post(SECRETS, secret())).status == 201
    finally:
        await server.stop()
    # a new key first, the old one still there to read with
    rotated = config_file(tmp_path / "two.yaml", provider("aesgcm", ("key2", KEY2)), provider("aescbc", ("key1", KEY1)))
    server = await start(data, rotated)
    api = client(session, server)
    try:
        got = await api.get(f"{SECRETS}/db")
        assert got.status == 200 and the_password(got.body) == PASSWORD
        assert sqlite_value(data, SECRET_KEY).startswith(b"k8s:enc:aescbc:v1:key1:")
        # an unchanged replace is still a write while the value is stale ...
        replaced = await api.put(f"{SECRETS}/db", got.body)
        assert replaced.status == 200
        assert replaced.body["metadata"]["resourceVersion"] != got.body["metadata"]["resourceVersion"]
        assert the_password(decrypt(sqlite_value(data, SECRET_KEY), "aesgcm", "key2", KEY2, SECRET_KEY)) == PASSWORD
        # ... and a no-op once it is written with the first key
        again = await api.put(f"{SECRETS}/db", replaced.body)
        assert again.body["metadata"]["resourceVersion"] == replaced.body["metadata"]["resourceVersion"]
    finally:
        await server.stop()
    # the old key dropped: values written with the new one still read
    server = await start(data, config_file(tmp_path / "three.yaml", provider("aesgcm", ("key2", KEY2))))
    try:
        assert the_password((await client(session, server).get(f"{SECRETS}/db")).body) == PASSWORD
    finally:
        await server.stop()


async def test_keys_of_one_provider_rotate_by_their_order(tmp_path: Path, session: aiohttp.ClientSession) -> None:
    data = tmp_path / "data"
    server = await start(data, config_file(tmp_path / "one.yaml", provider("aesgcm", ("key1", KEY1))))
    try:
        assert (await client(session, server).post(SECRETS, secret())).status == 201
    finally:
        await server.stop()
    server = await start(data, config_file(tmp_path / "two.yaml", provider("aesgcm", ("key2", KEY2), ("key1", KEY1))))
    api = client(session, server)
    try:
        got = await api.get(f"{SECRETS}/db")
        assert the_password(got.body) == PASSWORD
        assert (await api.put(f"{SECRETS}/db", got.body)).status == 200
        assert sqlite_value(data, SECRET_KEY).startswith(b"k8s:enc:aesgcm:v1:key2:")
    finally:
        await server.stop()


async def test_identity_first_writes_plain_and_still_reads_encrypted(tmp_path: Path, session: aiohttp.ClientSession) -> None:
    data = tmp_path / "data"
    server = await start(data, config_file(tmp_path / "one.yaml", provider("aescbc", ("key1", KEY1))))
    try:
        assert (await client(session, server).post(SECRETS, secret())).status == 201
    finally:
        await server.stop()
    server = await start(data, config_file(tmp_path / "two.yaml", provider("identity"), provider("aescbc", ("key1", KEY1))))
    api = client(session, server)
    try:
        got = await api.get(f"{SECRETS}/db")
        assert the_password(got.body) == PASSWORD
        assert (await api.post(SECRETS, secret("new"))).status == 201
        assert PASSWORD.encode() in base64.b64decode(json.loads(sqlite_value(data, "/registry/core/secrets/default/new"))["data"]["password"])
        assert (await api.put(f"{SECRETS}/db", got.body)).status == 200  # decrypting: migrating off encryption
        assert sqlite_value(data, SECRET_KEY).startswith(b'{"apiVersion":"v1"')
    finally:
        await server.stop()


def test_kubectl_replace_re_encrypts_every_secret_after_a_restart_with_a_new_key(tmp_path: Path) -> None:
    """The documented rotation: `kubectl get secrets -A -o json | kubectl replace -f -`, on a
    `kplane serve` restarted with the new key first."""
    data = tmp_path / "data"
    one = config_file(tmp_path / "one.yaml", provider("aescbc", ("key1", KEY1)))
    two = config_file(tmp_path / "two.yaml", provider("aesgcm", ("key2", KEY2)), provider("aescbc", ("key1", KEY1)))
    env = {**os.environ, "KUBECONFIG": str(data / "kubeconfig"), "KUBECACHEDIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}

    def kubectl(*args: str, stdin: str | None = None) -> str:
        done = subprocess.run(["kubectl", *args], input=stdin, capture_output=True, text=True, env=env, timeout=30)
        assert done.returncode == 0, done.stderr
        return done.stdout

    with serving(data, "--no-controllers", "--encryption-provider-config", str(one)):
        kubectl("create", "secret", "generic", "db", f"--from-literal=password={PASSWORD}")
        kubectl("create", "namespace", "team")
        kubectl("create", "secret", "generic", "token", "-n", "team", "--from-literal=password=x")
    with serving(data, "--no-controllers", "--encryption-provider-config", str(two)):
        assert sqlite_value(data, SECRET_KEY).startswith(b"k8s:enc:aescbc:v1:key1:")
        listed = kubectl("get", "secrets", "-A", "-o", "json")
        kubectl("replace", "-f", "-", stdin=listed)  # kubectl validates the List against /openapi/v2 first
        for key in (SECRET_KEY, "/registry/core/secrets/team/token"):
            assert sqlite_value(data, key).startswith(b"k8s:enc:aesgcm:v1:key2:")
        assert base64.b64decode(kubectl("get", "secret", "db", "-o", "jsonpath={.data.password}")).decode() == PASSWORD


# -- the configuration file ------------------------------------------------------------------------

def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_start_up_errors_are_one_clean_line(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    assert serve(tmp_path / "d1", "--encryption-provider-config", str(missing)) == (
        f'kplane: error reading encryption provider configuration file "{missing}": No such file or directory')
    short = config_file(tmp_path / "short.yaml", provider("aescbc", ("key1", b"12345678")))
    assert serve(tmp_path / "d2", "--encryption-provider-config", str(short)) == (
        f'kplane: error while parsing file "{short}": resources[0].providers[0].aescbc.keys[0].secret: '
        'Invalid value: "REDACTED": secret is not of the expected length, got 8, expected one of [16 24 32]')
    unknown = config_file(tmp_path / "unknown.yaml", {"rot13": {}})
    assert serve(tmp_path / "d3", "--encryption-provider-config", str(unknown)) == (
        f'kplane: error decoding encryption provider configuration file "{unknown}": '
        "strict decoding error: unknown field 'resources[0].providers[0].rot13'")
    assert not (tmp_path / "d1" / "state.db").exists()  # the file is read before the storage opens


@pytest.mark.parametrize(("providers", "resources", "problem"), [
    ([provider("secretbox", ("k", os.urandom(16)))], ["secrets"],
     'resources[0].providers[0].secretbox.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected '
     "length, got 16, expected one of [32]"),
    ([provider("aesgcm", ("k", os.urandom(24))), {"kms": {"name": "vault", "endpoint": "unix:///kms.sock"}}], ["secrets"],
     "resources[0].providers[1].kms: Unsupported value: KMS providers are not supported by kplane: "
     "use aesgcm, aescbc, secretbox or identity"),
    ([{"aesgcm": {"keys": [{"name": "k", "secret": "not base64!"}]}}], ["secrets"],
     'resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: "REDACTED": secrets must be base64 encoded'),
    ([{"aesgcm": {"keys": []}}], ["secrets"], "resources[0].providers[0].aesgcm.keys: Required value: at least one keys is required"),
    ([{"identity": {}, "aescbc": {"keys": [{"name": "k", "secret": b64(KEY1)}]}}], ["secrets"],
     "resources[0].providers[0]: Invalid value: {aescbc, identity}: more than one provider specified in a single "
     "element, should split into different list elements"),
    ([provider("identity")], ["Secrets"], 'resources[0].resources[0]: Invalid value: "Secrets": resource name should not contain capital letters'),
    ([provider("identity")], ["*"], "resources[0].resources[0]: Invalid value: \"*\": use '*.' to encrypt all the resources "
     "from core API group or *.* to encrypt all resources"),
    ([provider("identity")], ["secrets.*"], 'resources[0].resources[0]: Invalid value: "secrets.*": encrypting the same '
     "resource across groups is not supported"),
    ([provider("identity")], ["*.extensions"], "resources[0].resources[0]: Invalid value: \"*.extensions\": 'extensions' "
     "group has been removed and cannot be used for encryption"),
    ([provider("identity")], ["secrets", "*."], 'resources[0].resources: Invalid value: []string{"secrets", "*."}: using '
     "overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked"),
    ([provider("identity")], ["secrets", "secrets"], 'resources[0].resources: Invalid value: []string{"secrets", "secrets"}: '
     "the same resource cannot be specified multiple times"),
    ([provider("identity")], ["*.*", "*.*"], '[resources[0].resources: Invalid value: []string{"*.*", "*.*"}: the same '
     'resource cannot be specified multiple times, resources[0].resources: Invalid value: []string{"*.*", "*.*"}: using '
     "overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked]"),
    ([], ["secrets"], "resources[0].providers: Required value: at least one resources[0].providers is required"),
])
def test_validation_says_what_kubernetes_says(tmp_path: Path, providers: list[dict[str, Any]], resources: list[str],
                                              problem: str) -> None:
    path = config_file(tmp_path / "enc.yaml", *providers, resources=resources)
    with pytest.raises(EncryptionConfigError) as caught:
        load_encryption_config(path)
    assert str(caught.value) == f'error while parsing file "{path}": {problem}'
    assert b64(KEY1) not in str(caught.value)


def test_several_problems_are_all_named(tmp_path: Path) -> None:
    path = config_file(tmp_path / "enc.yaml", provider("aescbc", ("", b"x" * 7)))
    with pytest.raises(EncryptionConfigError) as caught:
        load_encryption_config(path)
    assert str(caught.value) == (
        f'error while parsing file "{path}": [resources[0].providers[0].aescbc.keys[0].name: Required value: name is a '
        'mandatory field for a key, resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secret '
        "is not of the expected length, got 7, expected one of [16 24 32]]")


def test_a_resource_masked_by_an_earlier_wildcard_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "enc.yaml", f"""
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: ['*.apps']
  providers: [{{aesgcm: {{keys: [{{name: k, secret: {b64(KEY1)}}}]}}}}]
- resources: [deployments.apps]
  providers: [{{identity: {{}}}}]
""")
    with pytest.raises(EncryptionConfigError, match=r'resource "deployments.apps" is masked by earlier rule "\*.apps"'):
        load_encryption_config(path)


def test_rules_match_by_resource_then_group_then_everything(tmp_path: Path) -> None:
    path = write(tmp_path / "enc.yaml", f"""
kind: EncryptionConfiguration
apiVersion: apiserver.config.k8s.io/v1
resources:
- resources: [events]
  providers: [identity: {{}}]
- resources: [secrets, configmaps, pandas.awesome.bears.example]
  providers: [{{aescbc: {{keys: [{{name: key1, secret: {b64(KEY1)}}}]}}}}]
- resources: ['*.apps']
  providers: [{{aescbc: {{keys: [{{name: key2, secret: {b64(KEY2)}}}]}}}}]
- resources: ['*.*']
  providers: [{{aesgcm: {{keys: [{{name: key3, secret: {b64(KEY1[:16])}}}]}}}}]
""")
    config = load_encryption_config(path)

    def written_by(key: str) -> bytes:
        transformer = config.transformer_for_key(key)
        assert transformer is not None
        return transformer.to_storage(b"{}", key.encode())[:24]

    assert written_by("/registry/core/events/default/e") == b"{}"
    assert written_by("/registry/core/secrets/default/s").startswith(b"k8s:enc:aescbc:v1:key1:")
    assert written_by("/registry/awesome.bears.example/pandas/p").startswith(b"k8s:enc:aescbc:v1:key1:")
    assert written_by("/registry/apps/deployments/default/d").startswith(b"k8s:enc:aescbc:v1:key2:")
    assert written_by("/registry/core/pods/default/p").startswith(b"k8s:enc:aesgcm:v1:key3:")
    assert written_by("/registry/stable.example.com/crontabs/default/c").startswith(b"k8s:enc:aesgcm:v1:key3:")
    assert config.transformer_for_key("/somewhere/else") is None


def test_the_legacy_kind_is_read_and_others_are_not(tmp_path: Path) -> None:
    legacy = write(tmp_path / "legacy.yaml", f"kind: EncryptionConfig\napiVersion: v1\nresources:\n- resources: [secrets]\n"
                                             f"  providers:\n  - aesgcm:\n      keys: [{{name: k, secret: {b64(KEY1)}}}]\n")
    assert load_encryption_config(legacy).transformer_for("", "secrets") is not None
    other = write(tmp_path / "other.yaml", "kind: EncryptionConfiguration\napiVersion: apiserver.config.k8s.io/v1beta1\nresources: []\n")
    with pytest.raises(EncryptionConfigError, match='no kind "EncryptionConfiguration" is registered for version '
                                                    '"apiserver.config.k8s.io/v1beta1"'):
        load_encryption_config(other)
    empty = write(tmp_path / "empty.yaml", "\n")
    with pytest.raises(EncryptionConfigError, match="is empty"):
        load_encryption_config(empty)
    broken = write(tmp_path / "broken.yaml", "kind: [\n")
    with pytest.raises(EncryptionConfigError, match="not YAML or JSON"):
        load_encryption_config(broken)
