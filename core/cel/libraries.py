"""Kubernetes' CEL libraries (``k8s.io/apiserver/pkg/cel/library``) as functions of the CEL
environment: quantity, url, ip, cidr, regex ``find``/``findAll``, lists and sets; the authorizer
(:mod:`.authz`); and ``matches``, in place of the binding's. The regex functions run on RE2
(:mod:`..regex`), a constant pattern compiled once (:func:`.checked.with_own_calls` points such
calls at kplane's names for them).

The binding cannot carry opaque values, so a Quantity, URL, IP or CIDR is a one-entry map
``{"<type name>": canonical text}``: equality of two quantities is equality of their values,
as in Kubernetes, and the member functions check the tag at run time.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from fractions import Fraction
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cel_expr_python import cel

from kplane.core.meta import quantity
from kplane.core.cel import authz, checked, regex

T = cel.Type
OPAQUE = T.Map(T.STRING, T.STRING)  # the static type of a library value
QUANTITY, URL, IP, CIDR = "kubernetes.Quantity", "kubernetes.URL", "net.IP", "net.CIDR"
_INT64 = 1 << 63


class LibraryError(ValueError):
    """A library function refused its arguments (an evaluation error of the rule)."""


def _unwrap(value: dict[str, str], kind: str) -> str:
    if not isinstance(value, dict) or kind not in value:
        raise LibraryError(f"no such overload: expected {kind}")
    return value[kind]


# --- quantity (resource.Quantity) -------------------------------------------------------------

def _parse_quantity(text: str) -> Fraction:
    try:
        return quantity.parse(text).value
    except ValueError as err:
        raise LibraryError(str(err)) from None


def _quantity(value: Fraction) -> dict[str, str]:
    return {QUANTITY: f"{value.numerator}/{value.denominator}"}


def _q(value: dict[str, str]) -> Fraction:
    return Fraction(_unwrap(value, QUANTITY))


def _as_integer(value: dict[str, str]) -> int:
    q = _q(value)
    if q.denominator != 1 or not -_INT64 <= q.numerator < _INT64:
        raise LibraryError("cannot convert value to integer")
    return q.numerator


def _is_quantity(text: str) -> bool:
    try:
        _parse_quantity(text)
    except LibraryError:
        return False
    return True


def _compare(a: Fraction, b: Fraction) -> int:
    return (a > b) - (a < b)


def _operand(other: Any) -> Fraction:
    return Fraction(other) if isinstance(other, int) else _q(other)


# --- url (url.ParseRequestURI) ---------------------------------------------------------------

def _parse_url(text: str) -> str:
    parts = urlsplit(text)
    if not (parts.scheme or text.startswith("/")) or any(c in text for c in " \t\r\n"):
        raise LibraryError(f"URL parse error during conversion from string: parse {text!r}: invalid URI for request")
    return text


def _is_url(text: str) -> bool:
    try:
        _parse_url(text)
    except (LibraryError, ValueError):
        return False
    return True


def _url(value: dict[str, str]) -> Any:
    return urlsplit(_unwrap(value, URL))


def _port(value: dict[str, str]) -> str:
    netloc = _url(value).netloc.rpartition("@")[2]
    host, _, port = netloc.rpartition(":")
    return port if host and not port.endswith("]") and "]" not in port else ""


def _query(value: dict[str, str]) -> dict[str, list[str]]:
    return parse_qs(_url(value).query, keep_blank_values=True)


# --- ip and cidr (netip) -----------------------------------------------------------------------

def _parse_ip(text: str) -> str:
    if "%" in text:
        raise LibraryError("IP address with zone value is not allowed")
    try:
        address = ipaddress.ip_address(text)
    except ValueError as err:
        raise LibraryError(f"IP Address {text!r} parse error during conversion from string: {err}") from None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        raise LibraryError("IPv4-mapped IPv6 address is not allowed")
    return text


def _ip(value: dict[str, str]) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    return ipaddress.ip_address(_unwrap(value, IP))


def _parse_cidr(text: str) -> str:
    address, _, prefix = text.partition("/")
    _parse_ip(address)
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError as err:
        raise LibraryError(f"network address parse error during conversion from string: {err}") from None
    if not prefix.isdigit():
        raise LibraryError("network address parse error during conversion from string: no prefix length")
    return text


def _cidr(value: dict[str, str]) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    return ipaddress.ip_interface(_unwrap(value, CIDR))


def _checks(parse: Callable[[str], str]) -> Callable[[str], bool]:
    def check(text: str) -> bool:
        try:
            parse(text)
        except LibraryError:
            return False
        return True
    return check


def _contains_ip(cidr: dict[str, str], other: Any) -> bool:
    address = ipaddress.ip_address(_parse_ip(other) if isinstance(other, str) else _unwrap(other, IP))
    return address in _cidr(cidr).network


def _contains_cidr(cidr: dict[str, str], other: Any) -> bool:
    network = ipaddress.ip_interface(_parse_cidr(other) if isinstance(other, str) else _unwrap(other, CIDR)).network
    outer = _cidr(cidr).network
    return network.version == outer.version and network.subnet_of(outer)  # type: ignore[arg-type]


# --- regex (RE2), lists ------------------------------------------------------------------------------

def _regex(pattern: str, *, constant: bool, refusal: str = "Illegal regex: ") -> regex.Pattern:
    """``pattern`` compiled; a refused one is the rule's error, ``refusal`` before Go's words."""
    try:
        return regex.compiled(pattern, constant=constant)
    except ValueError as err:
        raise LibraryError(f"{refusal}{err}") from None


def _matches_functions(constant: bool) -> list[cel.FunctionDecl]:
    """``matches`` in both forms, kplane's in place of the binding's (see :data:`.checked.OWN_CALLS`):
    ``constant``, for the calls whose pattern is written in the rule, compiled once."""
    def matches(text: str, pattern: str) -> bool:
        return _regex(pattern, constant=constant, refusal="").matches(text)

    b, s, tag = T.BOOL, T.STRING, "" if constant else "_computed"
    return [_fn(checked.own_name("matches", constant),
                (f"kplane_string_matches_string{tag}", b, [s, s], True, matches),
                (f"kplane_matches_string_string{tag}", b, [s, s], False, matches))]


def _find_functions(constant: bool) -> list[cel.FunctionDecl]:
    """``find`` and ``findAll``; ``constant``: kplane's names for the calls whose pattern is
    written in the rule (:func:`.checked.with_own_calls` points them here), compiled once."""
    def find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
        return _regex(pattern, constant=constant).find_all(text, limit)

    def find(text: str, pattern: str) -> str:
        return next(iter(find_all(text, pattern, 1)), "")

    s, i, prefix = T.STRING, T.INT, "kplane_" if constant else ""
    return [_fn(checked.own_name("find", constant), (f"{prefix}string_find_string", s, [s, s], True, find)),
            _fn(checked.own_name("findAll", constant),
                (f"{prefix}string_find_all_string", T.List(s), [s, s], True, find_all),
                (f"{prefix}string_find_all_string_int", T.List(s), [s, s, i], True, find_all))]


def _comparable(items: list[Any]) -> list[Any]:
    kinds = {type(i) for i in items}
    if len(kinds) > 1 and not kinds <= {int, float}:
        raise LibraryError("no such overload: list elements are not comparable")
    return items


def _extreme(pick: Callable[..., Any]) -> Callable[[list[Any]], Any]:
    def extreme(items: list[Any]) -> Any:
        if not items:
            raise LibraryError(f"{pick.__name__}(list) called on an empty list")
        return pick(_comparable(items))
    return extreme


def _sum(items: list[Any]) -> Any:
    if any(isinstance(i, float) for i in items):
        return float(sum(items))
    return sum(_comparable(items)) if items else 0


def _is_sorted(items: list[Any]) -> bool:
    _comparable(items)
    return all(a <= b for a, b in zip(items, items[1:]))


def _sets_contains(items: list[Any], wanted: list[Any]) -> bool:
    return all(w in items for w in wanted)


def _sets_intersects(a: list[Any], b: list[Any]) -> bool:
    return any(x in a for x in b)


def _guard(impl: Callable[..., Any]) -> Callable[..., Any]:
    """Library failures become the rule's evaluation error, never the request's."""
    def call(*args: Any) -> Any:
        try:
            return impl(*args)
        except LibraryError:
            raise
        except (ValueError, TypeError, KeyError, ArithmeticError) as err:
            raise LibraryError(str(err)) from None
    return call


def _fn(name: str, *overloads: tuple[str, Any, list[Any], bool, Callable[..., Any]]) -> cel.FunctionDecl:
    return cel.FunctionDecl(name, [cel.Overload(oid, ret, params, is_member=member, impl=_guard(impl))
                                   for oid, ret, params, member, impl in overloads])


_LIST = T.List(T.DYN)  # one overload per function: the runtime tells lists apart by kind only


def functions() -> list[cel.FunctionDecl]:
    """The declarations (with their implementations) added to every rule's environment."""
    q, s, b, i, d = OPAQUE, T.STRING, T.BOOL, T.INT, T.DOUBLE
    return [
        _fn("quantity", ("quantity_string", q, [s], False, lambda t: _quantity(_parse_quantity(t)))),
        _fn("isQuantity", ("is_quantity_string", b, [s], False, _is_quantity)),
        _fn("isInteger", ("quantity_is_integer", b, [q], True, lambda v: _q(v).denominator == 1 and -_INT64 <= _q(v) < _INT64)),
        _fn("asInteger", ("quantity_get_integer", i, [q], True, _as_integer)),
        _fn("asApproximateFloat", ("quantity_get_float", d, [q], True, lambda v: float(_q(v)))),
        _fn("sign", ("quantity_get_sign", i, [q], True, lambda v: _compare(_q(v), Fraction(0)))),
        _fn("isGreaterThan", ("quantity_greater", b, [q, q], True, lambda a, o: _q(a) > _q(o))),
        _fn("isLessThan", ("quantity_less", b, [q, q], True, lambda a, o: _q(a) < _q(o))),
        _fn("compareTo", ("quantity_compare", i, [q, q], True, lambda a, o: _compare(_q(a), _q(o)))),
        _fn("add", ("quantity_add", q, [q, q], True, lambda a, o: _quantity(_q(a) + _operand(o))),
            ("quantity_add_int", q, [q, i], True, lambda a, o: _quantity(_q(a) + _operand(o)))),
        _fn("sub", ("quantity_sub", q, [q, q], True, lambda a, o: _quantity(_q(a) - _operand(o))),
            ("quantity_sub_int", q, [q, i], True, lambda a, o: _quantity(_q(a) - _operand(o)))),
        _fn("url", ("string_to_url", q, [s], False, lambda t: {URL: _parse_url(t)})),
        _fn("isURL", ("is_url_string", b, [s], False, _is_url)),
        _fn("getScheme", ("url_get_scheme", s, [q], True, lambda v: _url(v).scheme)),
        _fn("getHost", ("url_get_host", s, [q], True, lambda v: _url(v).netloc.rpartition("@")[2])),
        _fn("getHostname", ("url_get_hostname", s, [q], True, lambda v: _url(v).hostname or "")),
        _fn("getPort", ("url_get_port", s, [q], True, _port)),
        _fn("getEscapedPath", ("url_get_escaped_path", s, [q], True, lambda v: _url(v).path)),
        _fn("getQuery", ("url_get_query", T.Map(s, T.List(s)), [q], True, _query)),
        _fn("ip", ("string_to_ip", q, [s], False, lambda t: {IP: str(ipaddress.ip_address(_parse_ip(t)))}),
            ("cidr_ip", q, [q], True, lambda v: {IP: str(_cidr(v).ip)})),
        # MutatingAdmissionPolicy's JSONPatch library: a key as one JSON pointer token
        _fn("jsonpatch.escapeKey", ("jsonpatch_escape_key_string", s, [s], False, lambda k: k.replace("~", "~0").replace("/", "~1"))),
        _fn("isIP", ("is_ip", b, [s], False, _checks(_parse_ip))),
        _fn("ip.isCanonical", ("ip_is_canonical", b, [s], False, lambda t: str(ipaddress.ip_address(_parse_ip(t))) == t)),
        _fn("family", ("ip_family", i, [q], True, lambda v: _ip(v).version)),
        _fn("isUnspecified", ("ip_is_unspecified", b, [q], True, lambda v: _ip(v).is_unspecified)),
        _fn("isLoopback", ("ip_is_loopback", b, [q], True, lambda v: _ip(v).is_loopback)),
        _fn("isLinkLocalMulticast", ("ip_is_link_local_multicast", b, [q], True,
                                     lambda v: _ip(v).is_multicast and _ip(v) in ipaddress.ip_network(
                                         "224.0.0.0/24" if _ip(v).version == 4 else "ff02::/16"))),
        _fn("isLinkLocalUnicast", ("ip_is_link_local_unicast", b, [q], True, lambda v: _ip(v).is_link_local)),
        _fn("isGlobalUnicast", ("ip_is_global_unicast", b, [q], True,
                                lambda v: not (_ip(v).is_unspecified or _ip(v).is_loopback or _ip(v).is_multicast
                                               or _ip(v).is_link_local or str(_ip(v)) == "255.255.255.255"))),
        _fn("cidr", ("string_to_cidr", q, [s], False, lambda t: {CIDR: _parse_cidr(t)})),
        _fn("isCIDR", ("is_cidr", b, [s], False, _checks(_parse_cidr))),
        _fn("containsIP", ("cidr_contains_ip_string", b, [q, s], True, _contains_ip),
            ("cidr_contains_ip_ip", b, [q, q], True, _contains_ip)),
        _fn("containsCIDR", ("cidr_contains_cidr_string", b, [q, s], True, _contains_cidr),
            ("cidr_contains_cidr", b, [q, q], True, _contains_cidr)),
        _fn("masked", ("cidr_masked", q, [q], True, lambda v: {CIDR: str(_cidr(v).network)})),
        _fn("prefixLength", ("cidr_prefix_length", i, [q], True, lambda v: _cidr(v).network.prefixlen)),
        *_find_functions(constant=False),
        *_find_functions(constant=True),
        *_matches_functions(constant=False),
        *_matches_functions(constant=True),
        _fn("isSorted", ("list_is_sorted", b, [_LIST], True, _is_sorted)),
        _fn("sum", ("list_sum", T.DYN, [_LIST], True, _sum)),
        _fn("min", ("list_min", T.DYN, [_LIST], True, _extreme(min))),
        _fn("max", ("list_max", T.DYN, [_LIST], True, _extreme(max))),
        _fn("sets.contains", ("list_sets_contains_list", b, [_LIST, _LIST], False, _sets_contains)),
        _fn("sets.equivalent", ("list_sets_equivalent_list", b, [_LIST, _LIST], False,
                                lambda a, o: _sets_contains(a, o) and _sets_contains(o, a))),
        _fn("sets.intersects", ("list_sets_intersects_list", b, [_LIST, _LIST], False, _sets_intersects)),
        *authz.functions(_guard),
    ]
