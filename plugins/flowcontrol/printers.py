"""Table columns of the flowcontrol kinds, as ``kubectl get`` shows them (``printFlowSchema``,
``printPriorityLevelConfiguration``)."""

from __future__ import annotations

from typing import Any

from kplane.api import AGE, NAME, Column, dig
from kplane.plugins.flowcontrol.types import DANGLING


def _missing_level(fs: dict[str, Any]) -> str:
    """The Dangling condition's status, ``?`` until there is one."""
    return next((c.get("status", "") for c in dig(fs, "status.conditions", []) or [] if c.get("type") == DANGLING), "?")


def _queuing(key: str):  # type: ignore[no-untyped-def]
    def cell(pl: dict[str, Any]) -> Any:
        value = dig(pl, f"spec.limited.limitResponse.queuing.{key}")
        return "<none>" if value is None else value
    return cell


def _shares(pl: dict[str, Any]) -> Any:
    value = dig(pl, "spec.limited.nominalConcurrencyShares")
    return "<none>" if value is None else value


FLOW_SCHEMA_COLUMNS = (
    NAME,
    Column("PriorityLevel", "string", lambda o: dig(o, "spec.priorityLevelConfiguration.name", ""),
           description="`name` is the name of the priority level configuration being referenced Required."),
    Column("MatchingPrecedence", "string", lambda o: dig(o, "spec.matchingPrecedence", 0),
           description="`matchingPrecedence` is used to choose among the FlowSchemas that match a given request."),
    Column("DistinguisherMethod", "string", lambda o: dig(o, "spec.distinguisherMethod.type") or "<none>",
           description="`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema."),
    AGE,
    Column("MissingPL", "string", _missing_level, description="references a broken or non-existent PriorityLevelConfiguration"),
)
PRIORITY_LEVEL_COLUMNS = (
    NAME,
    Column("Type", "string", lambda o: dig(o, "spec.type", ""),
           description="`type` indicates whether this priority level is subject to limitation on request execution."),
    Column("NominalConcurrencyShares", "string", _shares,
           description="`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level."),
    Column("Queues", "string", _queuing("queues"), description="`queues` is the number of queues for this priority level."),
    Column("HandSize", "string", _queuing("handSize"),
           description="`handSize` is a small positive number that configures the shuffle sharding of requests into queues."),
    Column("QueueLengthLimit", "string", _queuing("queueLengthLimit"),
           description="`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time."),
    AGE,
)
