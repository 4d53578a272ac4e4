"""The serviceaccounts controller (kube-controller-manager's
``pkg/controller/serviceaccount/serviceaccounts_controller.go``): every active namespace has a
ServiceAccount named ``default``.

It watches namespaces and service accounts. A namespace that is added or changes, and the
namespace of a ``default`` account that is deleted, is synced: when it is Active and its
``default`` account is missing from the informer's cache, the account is created. A create that
finds one already there (the cache lagged) or a namespace that started terminating is done, not
an error.
"""

from __future__ import annotations

from typing import Any

from kplane.api import ApiError, Handlers, RESTClient, SharedInformerFactory, WorkQueue, Workers, wait_synced

Obj = dict[str, Any]
MANAGED = ("default",)  # the accounts every namespace gets


class ServiceAccountsController:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory, *, workers: int = 1) -> None:
        self.client = client
        self.workers = workers
        self.informers = informers
        self.namespace_informer = informers.informer("", "v1", "namespaces")
        self.account_informer = informers.informer("", "v1", "serviceaccounts")
        self.queue: WorkQueue[str] = WorkQueue()

    async def run(self) -> None:
        self.namespace_informer.add_handlers(Handlers(
            on_add=self._namespace_changed, on_update=lambda old, new: self._namespace_changed(new)))
        self.account_informer.add_handlers(Handlers(on_delete=self._account_deleted))
        self.informers.start()
        async with Workers(self.queue) as workers:
            await wait_synced(self.namespace_informer, self.account_informer)
            workers.start(self.workers, self.sync, name="serviceaccount")
            await workers.wait()

    def _namespace_changed(self, namespace: Obj) -> None:
        self.queue.add(namespace["metadata"]["name"])

    def _account_deleted(self, account: Obj) -> None:
        meta = account["metadata"]
        if meta.get("name") in MANAGED and meta.get("namespace"):
            self.queue.add(meta["namespace"])

    async def sync(self, name: str) -> None:
        """Create the accounts an Active namespace lacks."""
        namespace = self.namespace_informer.indexer.get(name)
        if namespace is None or (namespace.get("status") or {}).get("phase") != "Active":
            return
        accounts = self.client.resource("", "v1", "serviceaccounts", name)
        cached = self.account_informer.lister().namespaced(name)
        for account in MANAGED:
            if cached.get(account) is not None:
                continue
            try:
                await accounts.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account}})
            except ApiError as err:
                if err.code != 409 and not err.namespace_terminating:
                    raise
