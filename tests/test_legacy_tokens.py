"""Legacy ServiceAccount tokens end to end, through kubectl over HTTPS: the tokens controller
fills a Secret of type ``kubernetes.io/service-account-token`` with a never-expiring JWT, the CA
and the namespace; the token authenticates while its Secret and account exist; a Secret whose
account is missing, or recreated with another uid, is deleted."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import jwt
import pytest

from kplane.core.authz.options import AuthorizationOptions
from kplane.core.serving.apiserver import APIServer
from tests.servers import server_config
from tests.test_serviceaccount_tokens import WhoPlugin, _token_kubeconfig

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")

Run = Callable[..., Awaitable[subprocess.CompletedProcess[str]]]


def _secret(name: str, account: str) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
                       "metadata": {"name": name, "annotations": {"kubernetes.io/service-account.name": account}}})


class Cluster:
    def __init__(self, server: APIServer, plugin: WhoPlugin, tmp: Path) -> None:
        self.server, self.who, self.tmp = server, plugin.who, tmp
        self.kubeconfig, self.ca = tmp / "state" / "kubeconfig", tmp / "state" / "pki" / "ca.crt"
        self.env = {**os.environ, "KUBECACHEDIR": str(tmp / "cache"), "HOME": str(tmp)}

    async def run(self, *args: str, config: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return await asyncio.to_thread(subprocess.run, ["kubectl", "--kubeconfig", str(config or self.kubeconfig), *args],
                                       input=stdin, capture_output=True, text=True, env=self.env, timeout=30)

    async def data(self, secret: str, key: str) -> str:
        """``data.KEY`` of the Secret once the controller filled it in, decoded."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            done = await self.run("get", "secret", secret, "-o", f"jsonpath={{.data.{key.replace('.', chr(92) + '.')}}}")
            if done.returncode == 0 and done.stdout:
                return base64.b64decode(done.stdout).decode()
            await asyncio.sleep(0.1)
        raise AssertionError(f"secret {secret} has no {key}")

    async def gone(self, secret: str) -> bool:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            done = await self.run("get", "secret", secret)
            if done.returncode != 0 and "NotFound" in done.stderr:
                return True
            await asyncio.sleep(0.1)
        return False

    async def get_as(self, token: str, name: str) -> subprocess.CompletedProcess[str]:
        return await self.run("get", "configmaps", config=_token_kubeconfig(self.server.url, self.ca, token, self.tmp / name))


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    plugin = WhoPlugin()
    server = APIServer(server_config(secure=True, data_dir=tmp_path / "state", port=0, run_controllers=True,
                                     extra_plugins=[("who", plugin)],
                                     authorization=AuthorizationOptions(modes=("Who", "AlwaysAllow"))))
    await server.start()
    try:
        yield Cluster(server, plugin, tmp_path)
    finally:
        await server.stop()


async def test_the_controller_fills_the_secret_and_its_token_authenticates(cluster: Cluster) -> None:
    assert (await cluster.run("create", "serviceaccount", "robot")).returncode == 0
    done = await cluster.run("apply", "-f", "-", stdin=_secret("robot-token", "robot"))
    assert done.returncode == 0, done.stderr
    token = await cluster.data("robot-token", "token")
    assert await cluster.data("robot-token", "ca.crt") == cluster.ca.read_text()
    assert await cluster.data("robot-token", "namespace") == "default"
    account = json.loads((await cluster.run("get", "serviceaccount", "robot", "-o", "json")).stdout)
    uid = account["metadata"]["uid"]
    secret = json.loads((await cluster.run("get", "secret", "robot-token", "-o", "json")).stdout)
    assert secret["metadata"]["annotations"]["kubernetes.io/service-account.uid"] == uid
    assert jwt.decode(token, options={"verify_signature": False}) == {
        "iss": "kubernetes/serviceaccount", "sub": "system:serviceaccount:default:robot",
        "kubernetes.io/serviceaccount/namespace": "default", "kubernetes.io/serviceaccount/secret.name": "robot-token",
        "kubernetes.io/serviceaccount/service-account.name": "robot",
        "kubernetes.io/serviceaccount/service-account.uid": uid}
    assert set(jwt.get_unverified_header(token)) == {"alg", "kid"}

    cluster.who.users.clear()
    done = await cluster.get_as(token, "legacy-config")
    assert done.returncode == 0, done.stderr
    user = cluster.who.users[-1]
    assert (user.name, user.uid) == ("system:serviceaccount:default:robot", uid)
    assert set(user.groups) >= {"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"}
    assert not user.extra  # kube's legacy validator gives no credential id

    # Each Secret has a token of its own, which lives and dies with it.
    done = await cluster.run("apply", "-f", "-", stdin=_secret("other-token", "robot"))
    assert done.returncode == 0, done.stderr
    other = await cluster.data("other-token", "token")
    assert other != token and (await cluster.get_as(other, "other-config")).returncode == 0

    assert (await cluster.run("delete", "secret", "robot-token")).returncode == 0
    done = await cluster.get_as(token, "legacy-config")
    assert done.returncode != 0 and "Unauthorized" in done.stderr, done.stderr
    assert (await cluster.get_as(other, "other-config")).returncode == 0

    # The account deleted: its Secrets go, and their tokens with them.
    assert (await cluster.run("delete", "serviceaccount", "robot")).returncode == 0
    assert await cluster.gone("other-token")
    done = await cluster.get_as(other, "other-config")
    assert done.returncode != 0 and "Unauthorized" in done.stderr, done.stderr


async def test_a_secret_of_a_missing_or_recreated_account_is_deleted(cluster: Cluster) -> None:
    done = await cluster.run("apply", "-f", "-", stdin=_secret("nobody-token", "nobody"))
    assert done.returncode == 0, done.stderr
    assert await cluster.gone("nobody-token")

    assert (await cluster.run("create", "serviceaccount", "robot")).returncode == 0
    assert (await cluster.run("apply", "-f", "-", stdin=_secret("robot-token", "robot"))).returncode == 0
    token = await cluster.data("robot-token", "token")
    # The account deleted and recreated at once (another uid): the Secret naming the old one is deleted.
    assert (await cluster.run("delete", "serviceaccount", "robot", "--wait=false")).returncode == 0
    assert (await cluster.run("create", "serviceaccount", "robot")).returncode == 0
    assert await cluster.gone("robot-token")
    done = await cluster.get_as(token, "legacy-config")
    assert done.returncode != 0 and "Unauthorized" in done.stderr, done.stderr


async def test_a_token_secret_must_name_its_account(cluster: Cluster) -> None:
    manifest = json.dumps({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
                           "metadata": {"name": "anonymous-token"}})
    done = await cluster.run("apply", "-f", "-", stdin=manifest)
    assert done.returncode != 0
    assert "metadata.annotations[kubernetes.io/service-account.name]: Required value" in done.stderr, done.stderr


async def test_an_account_name_that_climbs_out_of_its_namespace_gets_no_token(cluster: Cluster) -> None:
    """`..` in the annotation must not reach kube-system's accounts: kube reads the account in
    the Secret's own namespace, and no token is signed for anything else (the Secret goes)."""
    climbing = "x/../../../kube-system/serviceaccounts/namespace-controller"
    assert (await cluster.run("create", "serviceaccount", "namespace-controller", "-n", "kube-system")).returncode == 0
    done = await cluster.run("apply", "-f", "-", stdin=_secret("climber", climbing))
    assert done.returncode == 0, done.stderr
    assert await cluster.gone("climber")
