"""The made-up addresses of simulated nodes and their pods: node ``n`` is ``10.244.0.<n>`` and
hands out pod IPs from its podCIDR ``10.244.<n>.0/24``. Nothing is ever contacted."""

from __future__ import annotations


class NoAddressLeft(Exception):
    """Every pod IP of a node's podCIDR is taken (only pods bound by hand can get there)."""


def host_ip(number: int) -> str:
    return f"10.244.0.{number}"


def pod_cidr(number: int) -> str:
    return f"10.244.{number}.0/24"


class PodAddresses:
    """The pod IPs given out, by pod uid, so that a pod keeps its IP and no two pods share one."""

    def __init__(self) -> None:
        self._ips: dict[str, str] = {}  # pod uid -> pod IP given out

    def keep(self, uid: str, ip: str) -> None:
        """An IP given out before a restart: keep it taken."""
        self._ips[uid] = ip

    def release(self, uid: str) -> None:
        self._ips.pop(uid, None)

    def assign(self, uid: str, node: str, number: int) -> str:
        """The pod's IP from its node's podCIDR: the one it has, or the lowest free one."""
        if uid not in self._ips:
            taken = set(self._ips.values())
            prefix = f"10.244.{number}."
            free = next((prefix + str(host) for host in range(2, 255) if prefix + str(host) not in taken), None)
            if free is None:
                raise NoAddressLeft(f"no pod IP left in {prefix}0/24 of {node}")
            self._ips[uid] = free
        return self._ips[uid]
