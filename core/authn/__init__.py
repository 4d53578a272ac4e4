"""Authentication: who sends a request (k8s.io/apiserver ``pkg/authentication``).

- :mod:`.user`: the identity a request carries (``user.Info``) and the well-known names.
- :mod:`.authenticators`: the union that asks each authenticator in turn, as kube-apiserver's
  does, then lets a request without credentials through as ``system:anonymous``.
- :mod:`.filter`: the ``AUTHENTICATION`` filter that puts the user on the request, or answers 401.
- :mod:`.tokenfile`, :mod:`.clientcert`, :mod:`.requestheader`: the authenticators of
  ``--token-auth-file``, ``--client-ca-file`` and the front proxy's ``--requestheader-*``;
  :mod:`.configured` builds them from the flags.
- :mod:`.impersonation`: the ``IMPERSONATION`` filter (``Impersonate-*`` headers).
- :mod:`.options`: the ``kplane serve`` flags, with kube-apiserver's names.
"""
