"""The Job controller: :class:`.controller.JobController`."""

from __future__ import annotations

from kplane.plugins.batch.controllers.job.controller import JobController

__all__ = ["JobController"]
