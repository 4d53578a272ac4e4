"""Wire schemas of apps/v1beta2: the same shape as apps/v1."""

from __future__ import annotations

from kplane.plugins.apps.v1.schemas import DeploymentSchema, ReplicaSetSchema

__all__ = ["DeploymentSchema", "ReplicaSetSchema"]
