"""wardle.example.com/v1beta1: Flunder only; the version discovery prefers.

Mirrors ``pkg/apis/wardle/v1beta1``. Its Flunder has the internal shape, so it converts
automatically: no defaulting, no hand-written conversion. Fischer is not served here.
"""
