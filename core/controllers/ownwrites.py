"""A controller's own last writes, until its informer shows them.

An informer lags the writes its controller makes: a sync that runs on a pod's event before the
ReplicaSet's own status update has come back through the watch reads the ReplicaSet as it was
before that write, so its next status write carries an old resourceVersion, is refused with a
409, and costs a GET and a second PUT (client-go's controllers pay that too). Keeping the reply
to each write and starting the next sync from it, while the cache is older, writes the same
status in one request.
"""

from __future__ import annotations

from kplane.core.controllers.ownership import Obj, uid


class OwnWrites:
    """The server's replies to a controller's writes, by object key, while newer than its cache."""

    def __init__(self) -> None:
        self._replies: dict[str, Obj] = {}

    def wrote(self, key: str, reply: Obj) -> None:
        """``reply`` is what the server stored for ``key``'s write."""
        self._replies[key] = reply

    def newest(self, key: str, cached: Obj) -> Obj:
        """``cached``, unless the reply to the last write of the same object is newer; a reply
        the cache has caught up with (or that was of another object by that name) is dropped."""
        reply = self._replies.get(key)
        if reply is None:
            return cached
        if uid(reply) == uid(cached) and _version(reply) > _version(cached):
            return reply
        del self._replies[key]
        return cached

    def forget(self, key: str) -> None:
        self._replies.pop(key, None)


def _version(obj: Obj) -> int:
    """The resourceVersion as a number (kplane's are storage revisions); -1 if it is not one, so
    an unreadable reply never wins over the cache."""
    try:
        return int(obj["metadata"].get("resourceVersion") or -1)
    except ValueError:
        return -1
