"""CEL as Kubernetes uses it (``k8s.io/apiserver/pkg/cel``), on Google's cel-cpp (``cel-expr-python``):
one environment for every expression the server evaluates - CRD validation rules, admission
match conditions, ValidatingAdmissionPolicy and MutatingAdmissionPolicy expressions.

* :mod:`.environment` - the environment: Kubernetes' libraries and cel-go's extensions, the
  variables each use declares, and the wording of compile errors.
* :mod:`.libraries` - Kubernetes' CEL libraries (quantity, url, ip, cidr, regex, lists, sets).
* :mod:`.regex` - RE2 patterns (``matches``, ``find``, a schema's ``pattern``) as Go words their errors.
* :mod:`.authz` - the authorizer library (``authorizer.group(...).resource(...).check(verb)``).
* :mod:`.checked` - a compiled expression's tree, types and source positions, for :mod:`.cost`
  (static cost estimation) and :mod:`.validators`.
* :mod:`.validators` - what kube refuses in an expression that type-checks (cel-go's literal
  validators, constant patterns RE2 refuses), applied by ``environment.compile``.
"""

from kplane.core.cel import authz, checked, cost, environment, libraries, regex, validators

__all__ = ["authz", "checked", "cost", "environment", "libraries", "regex", "validators"]
