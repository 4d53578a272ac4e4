"""The tokens controller (kube-controller-manager's ``serviceaccount-token``,
``pkg/controller/serviceaccount/tokens_controller.go``): it fills the Secrets of type
``kubernetes.io/service-account-token`` with a legacy token of the account their annotation
``kubernetes.io/service-account.name`` names, and deletes those whose account is gone.

A Secret that is added or changes, and every such Secret naming an account that is added,
changes or is deleted, is synced. When its account (from the cache, else read live, as kube's
``fetchOnCacheMiss``) is missing, or has another uid than the Secret's
``kubernetes.io/service-account.uid`` annotation, the Secret is deleted (on the condition that it
is still the same Secret). Otherwise what it lacks is put in: ``data.token`` (signed with the
ServiceAccount signing key), ``data.ca.crt`` (the CA that verifies the server, when known),
``data.namespace`` and the uid annotation. As in kube it acts as the controller-manager itself
(its root client), not as a ServiceAccount of its own: the other controllers' credentials may
depend on it. Without a signing key (``kplane controller-manager``, out of the server's
process) it does nothing, and says so once, as kube-controller-manager without
``--service-account-private-key-file``.
"""

from __future__ import annotations

import base64
import logging
from typing import Any

from kplane.api import (
    ApiError, Handlers, RESTClient, SharedInformerFactory, WorkQueue, Workers, is_path_segment_name, wait_synced,
)
from kplane.plugins.core.tokens import legacy
from kplane.plugins.core.tokens.keys import KeySet

log = logging.getLogger(__name__)

Obj = dict[str, Any]
NAME = "serviceaccount-token"


class TokensController:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory, keys: KeySet | None,
                 root_ca: bytes | None) -> None:
        self.client = client
        self.informers = informers
        self.keys = keys
        self.root_ca = base64.b64encode(root_ca).decode() if root_ca else ""
        self.accounts = informers.informer("", "v1", "serviceaccounts")
        self.secrets = informers.informer("", "v1", "secrets")
        self.queue: WorkQueue[str] = WorkQueue()

    async def run(self) -> None:
        if self.keys is None:
            log.info("%s: no ServiceAccount signing key in this process; legacy token Secrets are not filled", NAME)
            return
        self.secrets.add_handlers(Handlers(on_add=self._secret_changed, on_update=lambda old, new: self._secret_changed(new)))
        self.accounts.add_handlers(Handlers(on_add=self._account_changed, on_update=lambda old, new: self._account_changed(new),
                                            on_delete=self._account_changed))
        self.informers.start()
        async with Workers(self.queue) as workers:
            await wait_synced(self.accounts, self.secrets)
            workers.start(1, self.sync, name=NAME)
            await workers.wait()

    def _secret_changed(self, secret: Obj) -> None:
        if secret.get("type") == legacy.SECRET_TYPE:
            meta = secret["metadata"]
            self.queue.add(f"{meta['namespace']}/{meta['name']}")

    def _account_changed(self, account: Obj) -> None:
        meta = account["metadata"]
        for secret in self.secrets.lister().namespaced(meta.get("namespace", "")).list():
            if _account_name(secret) == meta.get("name"):
                self._secret_changed(secret)

    async def sync(self, key: str) -> None:
        """Fill the Secret ``key`` (NAMESPACE/NAME) with its account's token, or delete it."""
        namespace, _, name = key.partition("/")
        secret = self.secrets.lister().namespaced(namespace).get(name)
        if secret is None or secret.get("type") != legacy.SECRET_TYPE:
            return
        meta = secret["metadata"]
        uid = (meta.get("annotations") or {}).get(legacy.UID_ANNOTATION, "")
        account = await self._account(namespace, _account_name(secret), uid)
        secrets = self.client.resource("", "v1", "secrets", namespace)
        if account is None or (uid and uid != account["metadata"]["uid"]):
            try:
                await self.client.request("DELETE", f"/api/v1/namespaces/{namespace}/secrets/{name}", {
                    "kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": meta["uid"]}})
            except ApiError as err:
                if err.code not in (404, 409):  # gone already, or another Secret of that name by now
                    raise
            return
        data = dict(secret.get("data") or {})
        missing = not data.get(legacy.TOKEN_KEY) or not data.get(legacy.NAMESPACE_KEY) or not uid or (
            self.root_ca and data.get(legacy.CA_KEY) != self.root_ca)
        if not missing:
            return
        assert self.keys is not None  # run() returned early otherwise
        if not data.get(legacy.TOKEN_KEY):
            token = await self.keys.sign(legacy.legacy_claims(account, name))
            data[legacy.TOKEN_KEY] = base64.b64encode(token.encode()).decode()
        data[legacy.NAMESPACE_KEY] = base64.b64encode(namespace.encode()).decode()
        if self.root_ca:
            data[legacy.CA_KEY] = self.root_ca
        annotations = {**(meta.get("annotations") or {}), legacy.UID_ANNOTATION: account["metadata"]["uid"]}
        await secrets.update({**secret, "metadata": {**meta, "annotations": annotations}, "data": data})

    async def _account(self, namespace: str, name: str, uid: str) -> Obj | None:
        """The account named, from the cache when it has it (with ``uid``, if given), else read
        live; None for a name that is no account's (``..``, a ``/``): never another namespace's."""
        if not name or is_path_segment_name(name):
            return None
        cached = self.accounts.lister().namespaced(namespace).get(name)
        if cached is not None and (not uid or cached["metadata"].get("uid") == uid):
            return cached
        try:
            return await self.client.resource("", "v1", "serviceaccounts", namespace).get(name)
        except ApiError as err:
            if err.code == 404:
                return None
            raise


def _account_name(secret: Obj) -> str:
    return ((secret.get("metadata") or {}).get("annotations") or {}).get(legacy.NAME_ANNOTATION, "")
