"""Evaluating admission policies (kube's ``admission/plugin/policy``)."""
