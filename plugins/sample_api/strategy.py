"""How Flunders and Fischers are created and updated (``pkg/registry/wardle/*/strategy.go``).

The generic Store does the work common to every kind (see ``core/registry/store.py``); these
strategies only say what differs. As in the original:

* Flunder is namespaced, Fischer cluster-scoped (set by ``add_kind`` in ``__init__.py``);
* nothing is prepared or canonicalized (status is not cleared, there is no generation);
* a PUT cannot create, and must carry the ``resourceVersion`` it read (422 otherwise);
* ``kubectl get`` shows the default columns, NAME and AGE;
* the field selectors are ``metadata.name`` and ``metadata.namespace``.

One deliberate difference: the original's Flunder ``ValidateUpdate`` returns nothing, so an
update could store a spec that creation would refuse. Here updates are validated like creates,
because the storage version (v1alpha1) cannot even represent such a spec: a Flunder with both
references, or with a reference but no type, would lose them silently on the way to storage.
"""

from __future__ import annotations

from kplane.api import FieldError, RequestContext, Strategy
from kplane.plugins.sample_api.types import Flunder
from kplane.plugins.sample_api.validation import validate_flunder


class FlunderStrategy(Strategy):
    allow_unconditional_update = False

    def validate(self, ctx: RequestContext, obj: Flunder) -> list[FieldError]:
        return validate_flunder(obj)

    def validate_update(self, ctx: RequestContext, obj: Flunder, old: Flunder) -> list[FieldError]:
        return validate_flunder(obj)  # the original validates on create only: see above


class FischerStrategy(Strategy):
    allow_unconditional_update = False
