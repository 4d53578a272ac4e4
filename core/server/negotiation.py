"""Content negotiation: reading request bodies and writing responses in the format asked for."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import orjson
import yaml
from aiohttp import web

from kplane.core.meta import errors
from kplane.core.patching.mediatypes import APPLY_PATCH, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH
from kplane.core.server.decoding import MAX_BODY, Decoded, decode_json, decode_yaml

# Bodies up to this size are decoded on the event loop; larger ones in a worker thread, so that a
# 3 MiB YAML body (seconds of PyYAML) never stalls every other request meanwhile.
INLINE_DECODE = 16 * 1024
JSON = "application/json"
YAML = "application/yaml"
_YAML_TYPES = (YAML, "application/x-yaml", "text/yaml", APPLY_PATCH)
_JSON_TYPES = (JSON, MERGE_PATCH, JSON_PATCH, STRATEGIC_MERGE_PATCH)


def media_type(header: str | None) -> str:
    """``application/json`` from ``application/json; charset=utf-8``; "" when absent."""
    return (header or "").split(";", 1)[0].strip().lower()


async def read_body(request: web.Request) -> bytes:
    """The request body, refused with 413 past :data:`MAX_BODY` without reading it all."""
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise errors.too_large(MAX_BODY)
    chunks, size = [], 0
    async for chunk in request.content.iter_chunked(65536):
        size += len(chunk)
        if size > MAX_BODY:
            raise errors.too_large(MAX_BODY)
        chunks.append(chunk)
    return b"".join(chunks)


def decode(body: bytes, content_type: str) -> Decoded:
    """Parse a JSON or YAML body (see :mod:`kplane.core.server.decoding` for the bounds); a missing
    Content-Type means JSON, as kube-apiserver assumes."""
    if not body.strip():
        raise errors.bad_request("the request body is empty")
    if content_type in _YAML_TYPES:
        return decode_yaml(body)
    if content_type and content_type not in _JSON_TYPES:
        raise errors.unsupported_media_type(content_type, [JSON, YAML])
    return decode_json(body)


async def read_decoded(request: web.Request, content_type: str | None = None) -> Decoded:
    """The request body, read and decoded (off the event loop when it is large)."""
    if content_type is None:
        content_type = media_type(request.headers.get("Content-Type"))
    return await decode_off_loop(await read_body(request), content_type)


async def decode_off_loop(body: bytes, content_type: str) -> Decoded:
    """:func:`decode`, in a thread when the body is large enough to hold up the event loop."""
    if len(body) <= INLINE_DECODE:
        return decode(body, content_type)
    return await asyncio.to_thread(decode, body, content_type)


def preferred(accept: str, offered: tuple[str, ...]) -> str | None:
    """The first of ``offered`` the Accept header's best clause takes, as kube-openapi picks
    (clauses by quality, then exact before wildcards; ``q=0`` refuses); no header takes the
    first offer. None: nothing offered is acceptable (a 406)."""
    if not accept.strip():
        return offered[0]
    clauses = []
    for index, part in enumerate(accept.split(",")):
        kind, _, params = part.partition(";")
        kind = kind.strip().lower()
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if kind and quality > 0:
            major, _, minor = kind.partition("/")
            clauses.append((-quality, major == "*", minor == "*", index, major, minor))
    for *_, major, minor in sorted(clauses):
        for offer in offered:
            offer_major, _, offer_minor = offer.partition("/")
            if major in ("*", offer_major) and minor in ("*", offer_minor):
                return offer
    return None


def wants_yaml(request: web.Request) -> bool:
    """YAML only when the client prefers it to JSON; JSON is everyone's fallback."""
    accept = request.headers.get("Accept", "")
    for part in accept.split(","):
        kind = media_type(part)
        if kind in (YAML, "application/x-yaml"):
            return True
        if kind in (JSON, "*/*", "application/*"):
            return False
    return False


# What Go's encoding/json escapes inside strings that orjson writes as they are (SetEscapeHTML,
# on by default, and the JavaScript line separators). They occur only inside strings, so any
# piece of a document that holds whole strings can be escaped on its own.
_HTML_ESCAPES = ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026"))
_SEPARATOR_LEAD = "\u2028".encode()[:1]  # the first byte of U+2028 and U+2029 in UTF-8
_SEPARATOR_ESCAPES = (("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029"))


def go_escape(data: bytes) -> bytes:
    """``data`` with Go's escapes. Every response goes through here, so the common case (none
    of those characters) costs single-byte scans only: a search for a 3-byte sequence is ~100
    times slower than one for a byte, and took 40% of a large LIST's time."""
    for raw, escaped in _HTML_ESCAPES:
        if raw in data:
            data = data.replace(raw, escaped)
    if _SEPARATOR_LEAD in data:
        for raw, escaped in _SEPARATOR_ESCAPES:
            if raw in data:
                data = data.replace(raw, escaped)
    return data


def encode_json(body: Any) -> bytes:
    """``body`` exactly as kube-apiserver's JSON serializer writes it (a ``json.Encoder``): Go's
    escapes, and a trailing newline. Every JSON body and watch line leaves through here (or, for
    LISTs, through :func:`go_escape` piece by piece), so clients that compare bytes see what
    they would see from Kubernetes."""
    return go_escape(orjson.dumps(body, option=orjson.OPT_APPEND_NEWLINE))


def encode_yaml(body: Any) -> bytes:
    """``body`` as YAML, in its fields' order."""
    plain = orjson.loads(orjson.dumps(body))  # resolves orjson.Fragment parts
    return yaml.safe_dump(plain, sort_keys=False).encode()


def json_response(status: int, body: Any, content_type: str = JSON) -> web.Response:
    """``body`` as kube-apiserver writes JSON (:func:`encode_json`), under ``content_type``."""
    return web.Response(status=status, body=encode_json(body), headers={"Content-Type": content_type})


def respond(request: web.Request, status: int, body: Any, warnings: list[str] | None = None) -> web.Response:
    """A response with ``body`` as JSON (or YAML when asked) and Warning headers."""
    if wants_yaml(request):
        response = web.Response(status=status, body=encode_yaml(body), content_type=YAML)
    else:
        response = json_response(status, body)
    for text in warnings or ():
        response.headers.add("Warning", warning_header(text))
    return response


def status_response(request: web.Request, error: errors.APIError) -> web.Response:
    return respond(request, error.code, error.status())


_NOT_IN_QUOTED_STRING = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def warning_header(text: str) -> str:
    """An RFC 7234 ``Warning`` value (code 299, agent ``-``) quoting ``text``: quotes and
    backslashes escaped, control characters (a client's field name may hold any) made spaces,
    since no header may carry them."""
    quoted = _NOT_IN_QUOTED_STRING.sub(" ", text.replace("\\", "\\\\").replace('"', '\\"'))
    return f'299 - "{quoted}"'
