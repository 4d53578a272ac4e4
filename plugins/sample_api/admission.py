"""The BanFlunder admission plugin (``pkg/admission/plugin/banflunder/admission.go``).

Every Fischer lists names that Flunders may not have. On each *create* of a Flunder (never on
an update) BanFlunder looks the new name up in every Fischer and refuses it with 403 Forbidden::

    flunders.wardle.example.com "bad" is forbidden: this name may not be used, please change the resource name

It reads the Fischers from an informer's cache, not from storage: the informer lists and
watches ``fischers`` over the server's own loopback client, as the original's does through
its loopback clientset. Until that informer has listed once its cache proves nothing, so the
plugin first waits for it (up to ten seconds, like k8s.io/apiserver's ``WaitForReady``) and
refuses with "not yet ready to handle request" if it is still not synced.

It runs in the mutating phase (the original implements ``Admit``) although it never changes
anything, so a banned name is refused before the spec is validated.
"""

from __future__ import annotations

import asyncio

from kplane.api import AdmissionRequest, Informer, Operation, deny

GROUP = "wardle.example.com"
READY_TIMEOUT = 10.0  # seconds; k8s.io/apiserver's admission.Handler waits as long


class BanFlunder:
    """Refuses Flunders whose name a Fischer disallows; ``fischers`` is an informer on v1alpha1 fischers."""

    name = "BanFlunder"

    def __init__(self, fischers: Informer, *, ready_timeout: float = READY_TIMEOUT) -> None:
        self.fischers = fischers
        self.ready_timeout = ready_timeout

    async def __call__(self, request: AdmissionRequest) -> None:
        if request.operation != Operation.CREATE:
            return  # admission.NewHandler(admission.Create): creates only
        if (request.resource.group, request.resource.kind) != (GROUP, "Flunder"):
            return  # we are only interested in flunders
        if not await self.wait_for_ready():
            raise deny(request, "not yet ready to handle request")
        name = request.obj.metadata.name
        for fischer in self.fischers.lister().list():
            if name in (fischer.get("disallowedFlunders") or []):
                raise deny(request, "this name may not be used, please change the resource name")

    async def wait_for_ready(self) -> bool:
        """True once the Fischer informer has synced, waiting at most ``ready_timeout`` for it."""
        if self.fischers.synced.is_set():
            return True
        try:
            await asyncio.wait_for(self.fischers.synced.wait(), self.ready_timeout)
        except TimeoutError:
            return False
        return True
