"""Calling admission webhooks (kube's ``admission/plugin/webhook``).

* :mod:`.source`: the Mutating/ValidatingWebhookConfigurations from the informers, each webhook
  compiled once (its match conditions) and kept in kube's order (configurations by name).
* :mod:`.review`: the AdmissionReview sent and the checks on the one answered.
* :mod:`.dispatcher`: which webhooks a request goes to, calling them (mutating in order with
  reinvocation, validating in parallel) and what their failures and denials become.
"""
