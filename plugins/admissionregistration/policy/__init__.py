"""Admission policies (kube's ``admission/plugin/policy``): CEL the server evaluates itself.

* :mod:`.generic`: what every kind of policy shares - policies and bindings from informers,
  compiled once per change and indexed by the resources they match; matching a request against
  a policy's ``matchConstraints`` and a binding's ``matchResources``; a binding's params.
* :mod:`.variables`: a policy's ``variables``, evaluated only when an expression reads them.
* :mod:`.fused`: a ValidatingAdmissionPolicy as one CEL program, and many of them batched -
  the path of a request they admit, never deciding otherwise than the expressions one by one.
* :mod:`.authorizer`: the ``authorizer`` variable, answered by the server's authorizers.
* :mod:`.validating`: ValidatingAdmissionPolicy - validations, messages, audit annotations,
  ``validationActions``, the admission plugin.
* :mod:`.mutating_construction`, :mod:`.mutating_patchers`, :mod:`.mutating`,
  :mod:`.mutating_admission`: MutatingAdmissionPolicy - ``Object{...}`` constructions, the
  ApplyConfiguration and JSONPatch mutations, their dispatch with reinvocation, the plugin.
* :mod:`.typechecking`: the controller writing a ValidatingAdmissionPolicy's ``status.typeChecking``.
"""
