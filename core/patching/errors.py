"""The one error every patch format raises, carrying the status kube-apiserver answers.

The patch functions know which failures are the client's (400, 413, 422) and which kube-apiserver
answers with a 500; the HTTP layer only turns the error into its Status.
"""

from __future__ import annotations

from kplane.core.meta.errors import APIError, StatusReason, bad_request

_REJECTED = "the server rejected our request due to an error in our request"


class PatchError(Exception):
    """A patch that cannot be applied; ``code`` is the HTTP status kube-apiserver answers."""

    def __init__(self, message: str, code: int = 422) -> None:
        super().__init__(message)
        self.message = message
        self.code = code

    def api_error(self) -> APIError:
        """The Status kube-apiserver sends for this failure."""
        if self.code == 400:
            return bad_request(self.message)
        if self.code == 413:
            return APIError(413, StatusReason.REQUEST_ENTITY_TOO_LARGE, f"Request entity too large: {self.message}")
        # NewGenericServerResponse: a fixed message, the real reason in a cause.
        return APIError(422, StatusReason.INVALID, _REJECTED, {"causes": [{"reason": "UnexpectedServerResponse", "message": self.message}]})
