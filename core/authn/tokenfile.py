"""``--token-auth-file``: bearer tokens listed in a CSV file, read once at start as kube-apiserver
does (k8s.io/apiserver ``pkg/authentication/token/tokenfile``).

Each record is ``token,user,uid[,"group1,group2,..."]``: at least three columns, more ignored
past the fourth; a field with commas is quoted (CSV's rules, a quote inside one doubled); empty
lines are skipped. A record with an empty token is skipped with a warning, a token listed twice
is the last record's (warned too). Anything else wrong is a :class:`TokenFileError` naming the
file and the line, so the server does not start with half its users.
"""

from __future__ import annotations

import csv
import logging
import re
from pathlib import Path

from kplane.core.authn.authenticators import StaticTokens
from kplane.core.authn.user import UserInfo

log = logging.getLogger(__name__)

# A record as Go's encoding/csv reads it (no lazy quotes): each field quoted, a quote inside
# doubled, or bare and free of quotes. Python's csv module alone accepts ``a"b``; Go does not.
_FIELD = r'(?:"(?:[^"]|"")*"|[^",\r\n]*)'
_RECORD = re.compile(f"{_FIELD}(?:,{_FIELD})*")


class TokenFileError(ValueError):
    """The token file cannot be read or is not in the format."""


def parse_token_file(text: str, path: str) -> dict[str, UserInfo]:
    """The users of a token file's ``text`` by token (``path`` is for the messages)."""
    tokens: dict[str, UserInfo] = {}
    lines = re.findall(r"[^\n]*\n|[^\n]+$", text)  # with their ends: a quoted field may hold one
    reader = csv.reader(lines, strict=True)
    start = 0
    try:
        for record in reader:
            raw, start = "".join(lines[start:reader.line_num]), reader.line_num
            if not record:
                continue
            if not _RECORD.fullmatch(raw.removesuffix("\n").removesuffix("\r")):
                raise csv.Error('bare " in non-quoted field')
            if len(record) < 3:
                raise TokenFileError(f"token file '{path}' must have at least 3 columns (token, user name, user uid), "
                                     f"found {len(record)} on line {reader.line_num}")
            token, name, uid = record[:3]
            if not token:
                log.warning("empty token has been found in token file '%s', line %d", path, reader.line_num)
                continue
            if token in tokens:
                log.warning("duplicate token has been found in token file '%s', line %d", path, reader.line_num)
            groups = tuple(g for g in record[3].split(",") if g) if len(record) > 3 else ()
            tokens[token] = UserInfo(name, uid, groups)
    except csv.Error as err:
        raise TokenFileError(f"token file '{path}': parse error on line {reader.line_num}: {err}") from None
    return tokens


def load_token_file(path: Path) -> StaticTokens:
    """The tokens of the file at ``path``, or a :class:`TokenFileError` saying what is wrong."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as err:
        raise TokenFileError(f"token file '{path}' cannot be read: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise TokenFileError(f"token file '{path}' is not UTF-8 text: {err.reason} at byte {err.start}") from None
    return StaticTokens(parse_token_file(text, str(path)))
