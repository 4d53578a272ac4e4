"""The root CA publisher (kube-controller-manager's ``root-ca-cert-publisher``,
``pkg/controller/certificates/rootcacertpublisher``): every namespace has a ConfigMap
``kube-root-ca.crt`` holding the CA bundle that verifies the API server, which the
``kube-api-access-*`` volume of every pod mounts next to its ServiceAccount token.

A namespace that is added or changes, and the namespace of a ``kube-root-ca.crt`` that is
changed or deleted, is synced: the ConfigMap is created, or its data and annotation put back.
Without a known CA (a server serving an operator's certificate, with no ``--root-ca-file``) the
controller does nothing, and says so once.
"""

from __future__ import annotations

import logging
from typing import Any

from kplane.api import ApiError, Handlers, RESTClient, SharedInformerFactory, WorkQueue, Workers, wait_synced

log = logging.getLogger(__name__)

Obj = dict[str, Any]
NAME = "kube-root-ca.crt"
KEY = "ca.crt"
DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints "
               "such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across "
               "distributions of Kubernetes clusters.")
ANNOTATION = "kubernetes.io/description"


class RootCAPublisher:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory, root_ca: bytes | None) -> None:
        self.client = client
        self.informers = informers
        self.root_ca = root_ca.decode() if root_ca else ""
        self.namespaces = informers.informer("", "v1", "namespaces")
        self.config_maps = informers.informer("", "v1", "configmaps")
        self.queue: WorkQueue[str] = WorkQueue()

    async def run(self) -> None:
        if not self.root_ca:
            log.info("root-ca-cert-publisher: the server's CA is not known (--root-ca-file); no %s is published", NAME)
            return
        self.namespaces.add_handlers(Handlers(
            on_add=self._namespace_changed, on_update=lambda old, new: self._namespace_changed(new)))
        self.config_maps.add_handlers(Handlers(
            on_update=lambda old, new: self._config_map_changed(new), on_delete=self._config_map_changed))
        self.informers.start()
        async with Workers(self.queue) as workers:
            await wait_synced(self.namespaces, self.config_maps)
            workers.start(1, self.sync, name="root-ca-cert-publisher")
            await workers.wait()

    def _namespace_changed(self, namespace: Obj) -> None:
        self.queue.add(namespace["metadata"]["name"])

    def _config_map_changed(self, config_map: Obj) -> None:
        meta = config_map["metadata"]
        if meta.get("name") == NAME and meta.get("namespace"):
            self.queue.add(meta["namespace"])

    async def sync(self, namespace: str) -> None:
        """Create or repair the namespace's ``kube-root-ca.crt``."""
        found = self.namespaces.indexer.get(namespace)
        if found is None or (found.get("status") or {}).get("phase") != "Active":
            return
        config_maps = self.client.resource("", "v1", "configmaps", namespace)
        current = self.config_maps.lister().namespaced(namespace).get(NAME)
        try:
            if current is None:
                await config_maps.create({"apiVersion": "v1", "kind": "ConfigMap",
                                          "metadata": {"name": NAME, "annotations": {ANNOTATION: DESCRIPTION}},
                                          "data": {KEY: self.root_ca}})
                return
            annotations = current["metadata"].get("annotations") or {}
            if current.get("data") == {KEY: self.root_ca} and annotations.get(ANNOTATION) == DESCRIPTION:
                return
            repaired = {**current, "data": {KEY: self.root_ca}}
            repaired["metadata"] = {**current["metadata"], "annotations": {**annotations, ANNOTATION: DESCRIPTION}}
            await config_maps.update(repaired)
        except ApiError as err:
            # 409: someone wrote it first (maybe with a CA of their own): synced again from the
            # cache, after a pause, as kube's publisher requeues; 404: the namespace went meanwhile
            if err.code != 404 and not err.namespace_terminating:
                raise
