"""What a plugin's or a controller's tests may import from kplane, beside the fixtures.

The ``kplane`` fixtures come with kplane's pytest plugin (``kplane.core.pytest_plugin``, found
through the ``pytest11`` entry point), so a test asks for them by name and imports nothing; what
a test does import, the error a refused request raises and the fixture's type, is here. Kept
apart from :mod:`kplane.api` so that plugins do not import pytest.
"""

from __future__ import annotations

from kplane.core.pytest_plugin import Cluster, KplaneError

__all__ = ["Cluster", "KplaneError"]
