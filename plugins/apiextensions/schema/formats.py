"""The string formats a custom resource's schema enforces: kube-openapi's ``strfmt`` registry as
apiextensions-apiserver (1.32) keeps it; every other format is dropped from the schema and
checks nothing (``int32``/``int64``/``float``/``double`` are range checks of numbers instead).

Names are normalized as go-openapi does (dashes removed: ``date-time`` is ``datetime``). Each
checker answers what the Go function it stands for answers (``net.ParseIP``, ``time.Parse``,
``url.ParseRequestURI``, ``net/mail.ParseAddress``, ...), on ASCII-only character classes as
Go's regular expressions have them. Patterns with Unicode classes run on RE2, as in Go.
"""

from __future__ import annotations

import datetime
import functools
import ipaddress
import re
from collections.abc import Callable

from kplane.api import cel

_DIGITS = re.compile(r"[0-9]+\Z")
_HEX = "[0-9a-fA-F]"


def _ipv4_sloppy(s: str) -> bool:
    """IPv4 dotted quad as ``k8s.io/utils/net.ParseIPSloppy`` reads it (leading zeros allowed)."""
    parts = s.split(".")
    return len(parts) == 4 and all(_DIGITS.match(p) and int(p) <= 255 for p in parts)


def _ipv6(s: str, sloppy: bool = False) -> bool:
    if "%" in s or not s.isascii():
        return False
    head, _, last = s.rpartition(":")
    if sloppy and "." in last:  # an embedded IPv4 part: leading zeros allowed
        if not _ipv4_sloppy(last):
            return False
        s = f"{head}:{'.'.join(str(int(p)) for p in last.split('.'))}"
    try:
        ipaddress.IPv6Address(s)
    except ValueError:
        return False
    return True


def _parse_ip(s: str, sloppy: bool) -> bool:
    """``net.ParseIP`` (``sloppy``: ``ParseIPSloppy``, which allows leading zeros in IPv4 parts)."""
    if sloppy and _ipv4_sloppy(s):
        return True
    if not sloppy:
        try:
            ipaddress.IPv4Address(s)
            return True
        except ValueError:
            pass
    return ":" in s and _ipv6(s, sloppy)


def _is_ipv4(s: str) -> bool:
    return _parse_ip(s, True) and "." in s


def _is_ipv6(s: str) -> bool:
    return _parse_ip(s, False) and ":" in s


def _is_cidr(s: str) -> bool:
    addr, slash, bits = s.partition("/")
    if not slash or not _DIGITS.match(bits):
        return False
    if _ipv4_sloppy(addr):
        return int(bits) <= 32
    return ":" in addr and _ipv6(addr, True) and int(bits) <= 128


_MAC = [re.compile(rf"{_HEX}{{2}}(?P<sep>[:-]){_HEX}{{2}}(?:(?P=sep){_HEX}{{2}}){{{n - 2}}}\Z") for n in (6, 8, 20)]
_MAC_DOTTED = [re.compile(rf"{_HEX}{{4}}(?:\.{_HEX}{{4}}){{{n - 1}}}\Z") for n in (3, 4, 10)]


def _is_mac(s: str) -> bool:
    return any(p.match(s) for p in (*_MAC, *_MAC_DOTTED))


_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")


def _is_date(s: str) -> bool:
    m = _DATE.match(s)
    if not m:
        return False
    try:
        datetime.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return False
    return True


_TIME = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))\Z", re.S)


def _is_datetime(s: str) -> bool:
    if len(s) < 4:
        return False
    parts = s.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    m = _TIME.match(parts[1])
    return bool(m) and m[1] <= "23" and m[2] <= "59" and m[3] <= "59"


_GO_DURATION = re.compile(r"[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)\Z")
_LOOSE_DURATION = re.compile(r"([0-9]+)[\t\n\f\r ]*([A-Za-zµ]+)")
_UNITS = (("ns", "nano"), ("us", "µs", "micro"), ("ms", "milli"), ("s", "sec"), ("m", "min"), ("h", "hr", "hour"),
          ("d", "day"), ("w", "wk", "week"))


def _is_duration(s: str) -> bool:
    """``time.ParseDuration``, else any ``<digits> <unit>`` in the string (go-openapi's loose form)."""
    if _GO_DURATION.match(s):
        return True
    found = False
    for digits, unit in _LOOSE_DURATION.findall(s):
        if len(digits.lstrip("0")) > 19 or int(digits) >= 1 << 63:  # no int() of thousands of digits
            return False  # strconv.Atoi fails the whole parse
        unit = unit.lower()
        found = found or any((i == len(v) - 1 and unit.startswith(w)) or w == unit for v in _UNITS for i, w in enumerate(v))
    return found


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_BAD_ESCAPE = re.compile(r"%(?![0-9a-fA-F]{2})")
_USERINFO = re.compile(r"[A-Za-z0-9\-._:~!$&'()*+,;=%@]*\Z")
_HOST_OK = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:\[\]<>\"%\x80-\U0010ffff]*\Z")
_PORT = re.compile(r"(:[0-9]*)?\Z")


def _is_request_uri(s: str) -> bool:
    """``url.ParseRequestURI``: an absolute URI or an absolute path, with valid escapes."""
    if not s or any(c < " " or c == "\x7f" for c in s):
        return False
    m = _SCHEME.match(s)
    scheme = bool(m) and len(m[0]) > 1
    if s.startswith(":"):
        return False
    rest = s[m.end():] if m else s
    if not (rest.endswith("?") and rest.count("?") == 1):
        rest = rest.partition("?")[0]
    else:
        rest = rest[:-1]
    if not rest.startswith("/"):
        return scheme  # opaque ("mailto:x"); a relative path is no request URI
    if scheme and rest.startswith("//"):
        authority, _, rest = rest[2:].partition("/")
        userinfo, at, host = authority.rpartition("@")
        if at and not _USERINFO.match(userinfo):
            return False
        if host.startswith("["):
            close = host.find("]")
            if close < 0 or not _PORT.match(host[close + 1:]):
                return False
        elif ":" in host and not _PORT.match(host[host.rfind(":"):]):
            return False
        if _BAD_ESCAPE.search(host) or not _HOST_OK.match(host):
            return False
    return not _BAD_ESCAPE.search(rest)


_ATEXT = r"[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~\x80-\U0010ffff]+"
_DOT_ATOM = rf"{_ATEXT}(?:\.{_ATEXT})*"
_QUOTED = r'"(?:[^"\\\r\n]|\\.)*"'
_ADDR_SPEC = rf"(?:{_DOT_ATOM}|{_QUOTED})@(?:{_DOT_ATOM}|\[[^\[\]\\]*\])"
_PHRASE = rf"(?:{_ATEXT}|{_QUOTED})(?:[ \t]+(?:{_ATEXT}|{_QUOTED}))*"
_EMAIL = re.compile(rf"[ \t]*(?:{_ADDR_SPEC}|(?:{_PHRASE})?[ \t]*<{_ADDR_SPEC}>)[ \t]*\Z")


def _is_email(s: str) -> bool:
    """``net/mail.ParseAddress``: an addr-spec, or a display name and ``<addr-spec>``."""
    return bool(_EMAIL.match(s))


def _regex(pattern: str, flags: int = 0) -> Callable[[str], bool]:
    compiled = re.compile(pattern + r"\Z", flags)
    return lambda s: bool(compiled.match(s))


@functools.cache
def _hostname() -> cel.regex.Pattern:
    """Built on first use: RE2 takes about 0.1 s over its Unicode classes, every server start would pay it."""
    return cel.regex.Pattern(r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-"
                             r"\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$")


def _is_hostname(s: str) -> bool:
    return _hostname().matches(s) and len(s.encode()) <= 255 and all(len(p.encode()) <= 63 for p in s.split("."))


def _luhn(digits: str) -> bool:
    total = 0
    for i, c in enumerate(reversed(digits)):
        n = int(c) * (2 if i % 2 else 1)
        total += n - 9 if n >= 10 else n
    return total % 10 == 0


_CREDIT_CARD = re.compile(r"(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|"
                          r"3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})\Z")


def _is_credit_card(s: str) -> bool:
    digits = re.sub(r"[^0-9]+", "", s)
    return bool(_CREDIT_CARD.match(digits)) and _luhn(digits)


def _isbn(s: str, version: int) -> bool:
    s = re.sub(r"[\t\n\v\f\r \x85\xa0-]+", "", s)
    if version == 10:
        if not re.fullmatch(r"[0-9]{9}X|[0-9]{10}", s):
            return False
        total = sum((i + 1) * int(s[i]) for i in range(9)) + (100 if s[9] == "X" else 10 * int(s[9]))
        return total % 11 == 0
    if not re.fullmatch(r"[0-9]{13}", s):
        return False
    total = sum((1, 3)[i % 2] * int(s[i]) for i in range(12))
    return int(s[12]) == (10 - total % 10) % 10


_RGB = r"(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])"
_SPACE = r"[\t\n\f\r ]*"
_UUID = "[0-9a-f]{8}-?[0-9a-f]{4}-?%s[0-9a-f]{3}-?%s[0-9a-f]{3}-?[0-9a-f]{12}"

#: Normalized format name -> checker of a string value.
CHECKERS: dict[str, Callable[[str], bool]] = {
    "bsonobjectid": _regex(f"{_HEX}{{24}}"),
    "uri": _is_request_uri,
    "email": _is_email,
    "hostname": _is_hostname,
    "ipv4": _is_ipv4,
    "ipv6": _is_ipv6,
    "cidr": _is_cidr,
    "mac": _is_mac,
    "uuid": _regex(_UUID % ("[0-9a-f]", "[0-9a-f]"), re.I),
    "uuid3": _regex(_UUID % ("3", "[0-9a-f]"), re.I),
    "uuid4": _regex(_UUID % ("4", "[89ab]"), re.I),
    "uuid5": _regex(_UUID % ("5", "[89ab]"), re.I),
    "isbn": lambda s: _isbn(s, 10) or _isbn(s, 13),
    "isbn10": lambda s: _isbn(s, 10),
    "isbn13": lambda s: _isbn(s, 13),
    "creditcard": _is_credit_card,
    "ssn": lambda s: len(s) == 11 and bool(re.fullmatch(r"[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}", s)),
    "hexcolor": _regex(r"#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})"),
    "rgbcolor": _regex(rf"rgb\({_SPACE}{_RGB}{_SPACE},{_SPACE}{_RGB}{_SPACE},{_SPACE}{_RGB}{_SPACE}\)"),
    "byte": _regex(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})"),
    "password": lambda s: True,
    "date": _is_date,
    "duration": _is_duration,
    "datetime": _is_datetime,
}


def normalized(name: str) -> str:
    """go-openapi's format name normalization."""
    return name.replace("-", "")


def supported(schema_type: str, name: str) -> bool:
    """Whether apiextensions-apiserver keeps ``format: name`` on a schema of ``schema_type``
    (``""`` for none or several types), as ``StripUnsupportedFormatsPostProcessor`` decides."""
    if schema_type in ("", "string"):
        return normalized(name) in CHECKERS
    if schema_type == "integer":
        return name in ("int32", "int64")
    if schema_type == "number":
        return name in ("float", "double")
    return False
