"""The configuration producer (kube-apiserver's ``priority-and-fairness-config-producer``
post-start hook, ``pkg/registry/flowcontrol/ensurer``): it creates the bootstrap objects that
are missing, and keeps them as ``apf.kubernetes.io/autoupdate-spec`` says, once before the server
reports ready and then every ``interval`` seconds:

- a **mandatory** object (``exempt``, ``catch-all``) is always re-created, its spec put back and
  its annotation set to ``true``;
- a **suggested** object is re-created when deleted; its spec is put back while the annotation
  says ``true``, or, without a boolean annotation, while its generation is 1 (nobody changed it),
  and the annotation is then written to say which;
- an object neither names, annotated ``true``, is deleted (a suggestion no longer made).

It is a client of the server like any other: it reads the objects through informers and writes
through the loopback client, so its writes pass validation and admission."""

from __future__ import annotations

import logging
from typing import Any

from kplane.api import ApiError, Informer, ResourceClient, Scheme
from kplane.plugins.flowcontrol.bootstrap import MANDATORY_LEVELS, MANDATORY_SCHEMAS, SUGGESTED_LEVELS, SUGGESTED_SCHEMAS
from kplane.plugins.flowcontrol.types import AUTO_UPDATE, GROUP

log = logging.getLogger(__name__)

FIELD_MANAGER = "api-priority-and-fairness-config-producer-v1"
Obj = dict[str, Any]


def _parse_bool(value: str | None) -> bool | None:
    """Go's ``strconv.ParseBool``: None for anything else."""
    if value in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if value in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


def revise(current: Obj, bootstrap: Obj, mandatory: bool) -> Obj | None:
    """``ReviseIfNeeded``: the object to write in place of ``current``, or None when it is as it should be."""
    annotations = current["metadata"].get("annotations") or {}
    stated = _parse_bool(annotations.get(AUTO_UPDATE))
    auto_update = mandatory or (stated if stated is not None else current["metadata"].get("generation") == 1)
    update_annotation = stated != auto_update or AUTO_UPDATE not in annotations
    spec_changed = auto_update and current.get("spec") != bootstrap["spec"]
    if not (update_annotation or spec_changed):
        return None
    revised = {**current, "metadata": {**current["metadata"]}}
    if spec_changed:
        revised["spec"] = bootstrap["spec"]
    if update_annotation:
        revised["metadata"]["annotations"] = {**annotations, AUTO_UPDATE: "true" if auto_update else "false"}
    return revised


class Ensurer:
    def __init__(self, scheme: Scheme, schemas: Informer, levels: Informer) -> None:
        def wire(plural: str, objects: dict[str, Any]) -> dict[str, Obj]:
            rt = scheme.get(GROUP, plural)
            assert rt is not None
            made = {}
            for name, obj in objects.items():
                encoded = rt.encode(obj, "v1")
                made[name] = {**encoded, "metadata": {"name": name, "annotations": {AUTO_UPDATE: "true"}}}
            return made

        # (informer, bootstrap objects by name with whether each is mandatory), priority levels first
        self.kinds = [(levels, {**{n: (o, False) for n, o in wire("prioritylevelconfigurations", SUGGESTED_LEVELS).items()},
                                **{n: (o, True) for n, o in wire("prioritylevelconfigurations", MANDATORY_LEVELS).items()}}),
                      (schemas, {**{n: (o, False) for n, o in wire("flowschemas", SUGGESTED_SCHEMAS).items()},
                                 **{n: (o, True) for n, o in wire("flowschemas", MANDATORY_SCHEMAS).items()}})]

    async def ensure(self) -> None:
        """One round: ``ensure`` of kube's ensurer (suggested, mandatory, then the unwanted removed)."""
        for informer, wanted in self.kinds:
            for name, (bootstrap, mandatory) in wanted.items():
                await self._ensure_one(informer.resource, informer.indexer.get(name), bootstrap, mandatory)
        for informer, wanted in self.kinds:
            for current in informer.indexer.list():
                name = current["metadata"]["name"]
                annotations = current["metadata"].get("annotations") or {}
                if name not in wanted and _parse_bool(annotations.get(AUTO_UPDATE)):
                    try:
                        await informer.resource.delete(name)
                    except ApiError as err:
                        if err.code != 404:
                            raise

    async def _ensure_one(self, resource: ResourceClient, current: Obj | None, bootstrap: Obj, mandatory: bool) -> None:
        name = bootstrap["metadata"]["name"]
        if current is None:
            try:
                await resource.create(bootstrap, fieldManager=FIELD_MANAGER)
                log.debug("created the %s %s", "mandatory" if mandatory else "suggested", name)
                return
            except ApiError as err:
                if err.code != 409:
                    raise
                current = await resource.get(name)  # made meanwhile, by another server on the same storage
        revised = revise(current, bootstrap, mandatory)
        if revised is None:
            return
        try:
            await resource.update(revised, fieldManager=FIELD_MANAGER)
        except ApiError as err:
            if err.code not in (404, 409):  # changed or gone meanwhile: the next round looks again
                raise
