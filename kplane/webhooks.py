"""Admission webhooks in Python, served over HTTPS and registered on a kplane (or any
Kubernetes) API server in a few lines::

    from kplane.webhooks import WebhookServer, deny, mutating, validating

    @validating("apps/v1", "deployments")
    def no_latest(review):
        images = [c["image"] for c in review.object["spec"]["template"]["spec"]["containers"]]
        if any(i.endswith(":latest") for i in images):
            return "the :latest tag is not allowed"      # a denial: the client reads admission webhook
                                                             # "no-latest.webhooks.kplane.io" denied the request: ...

    @mutating("v1", "configmaps", operations=("CREATE",))
    def stamp(review):
        obj = review.object                              # a copy: change it and return it
        obj.setdefault("metadata", {}).setdefault("labels", {})["stamped"] = "yes"
        return obj                                       # the JSONPatch is computed here

    with WebhookServer(no_latest, stamp).serving(kplane):   # the pytest fixture, or a kubeconfig path
        ...

A validating handler returns None or True (allowed), False or a message (denied), or a
:class:`Verdict` (:func:`allow` / :func:`deny`, with a code, a reason, warnings). A mutating
handler returns the changed object (or None: unchanged) or a Verdict. Handlers may be plain
functions (run in a worker thread, so they may block) or coroutines; ``review.warn()`` adds a
warning and ``review.audit_annotations`` reaches the request's audit event. A handler that
raises answers HTTP 500, so the API server applies the webhook's ``failurePolicy``.

The server listens on loopback with a certificate for ``127.0.0.1`` and ``localhost`` signed
by a CA of its own (or the ``ca`` given, e.g. :func:`kplane_ca` of a server's data dir); the
configurations it registers name that CA in ``caBundle`` and reach it by ``clientConfig.url``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import inspect
import json
import logging
import re
import ssl
import threading
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from kplane.core.client.kubeconfig import client_from_kubeconfig
from kplane.core.client.rest import ApiError, RESTClient
from kplane.core.client.tls import load_cert_chain
from kplane.core.pki.certificates import KeyPair, SubjectAltNames, issue, new_ca

__all__ = ["Review", "Verdict", "Webhook", "WebhookServer", "allow", "deny", "kplane_ca", "mutating", "validating"]

log = logging.getLogger(__name__)

Obj = dict[str, Any]
GROUP, VERSION = "admissionregistration.k8s.io", "v1"
REVIEW_VERSION = "admission.k8s.io/v1"
MAX_REVIEW_BYTES = 3 * 1024 * 1024  # kube-apiserver sends objects up to 3 MiB (its request limit)
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?){2,}$")


# -- what a handler sees and answers ----------------------------------------------------------------
@dataclass
class Review:
    """One AdmissionReview's request, as a handler reads it. ``object`` and ``old_object`` are
    copies the handler may change; ``request`` is the review's request as sent."""

    request: Obj
    warnings: list[str] = field(default_factory=list)
    audit_annotations: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.object: Obj | None = copy.deepcopy(self.request.get("object"))
        self.old_object: Obj | None = copy.deepcopy(self.request.get("oldObject"))

    @property
    def uid(self) -> str:
        return str(self.request.get("uid", ""))

    @property
    def operation(self) -> str:
        """CREATE, UPDATE, DELETE or CONNECT."""
        return str(self.request.get("operation", ""))

    @property
    def namespace(self) -> str:
        return str(self.request.get("namespace", ""))

    @property
    def name(self) -> str:
        return str(self.request.get("name", ""))

    @property
    def kind(self) -> Obj:
        """The object's group, version and kind, as the webhook asked for it."""
        return dict(self.request.get("kind") or {})

    @property
    def resource(self) -> Obj:
        return dict(self.request.get("resource") or {})

    @property
    def sub_resource(self) -> str:
        return str(self.request.get("subResource", ""))

    @property
    def user_info(self) -> Obj:
        return dict(self.request.get("userInfo") or {})

    @property
    def dry_run(self) -> bool:
        return bool(self.request.get("dryRun"))

    @property
    def options(self) -> Obj | None:
        """The operation's options (CreateOptions, UpdateOptions, DeleteOptions)."""
        return self.request.get("options")

    def warn(self, message: str) -> None:
        """A warning the client is shown (kubectl prints ``Warning: ...``)."""
        self.warnings.append(message)


@dataclass(frozen=True)
class Verdict:
    """A handler's explicit answer: allowed or not, and the metav1.Status a denial sends."""

    allowed: bool
    message: str = ""
    code: int = 403
    reason: str = ""
    warnings: tuple[str, ...] = ()
    object: Obj | None = None  # a mutating handler's changed object


def allow(*, warnings: Iterable[str] = (), object: Obj | None = None) -> Verdict:
    return Verdict(True, warnings=tuple(warnings), object=object)


def deny(message: str, *, code: int = 403, reason: str = "", warnings: Iterable[str] = ()) -> Verdict:
    """A denial: the client gets ``code`` and ``reason`` as given, and ``message`` after the API
    server's ``admission webhook "NAME" denied the request: ``."""
    return Verdict(False, message, code, reason, tuple(warnings))


Handler = Callable[[Review], Any]


# -- the webhooks ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Webhook:
    """A handler with the rules that choose its requests: one entry of a webhook configuration."""

    handler: Handler
    mutating: bool
    api_version: str
    resources: tuple[str, ...]
    operations: tuple[str, ...] = ("CREATE", "UPDATE")
    name: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)  # more fields of the entry, in kube's spelling

    def __call__(self, review: Review) -> Any:
        return self.handler(review)

    @property
    def path(self) -> str:
        return f"/{'mutate' if self.mutating else 'validate'}/{self.name}"

    def entry(self, base_url: str, ca_bundle: bytes) -> Obj:
        """This webhook's entry of a Mutating/ValidatingWebhookConfiguration."""
        group, _, version = self.api_version.rpartition("/")
        scope = self.options.get("scope", "*")
        rule = {"apiGroups": [group], "apiVersions": [version], "resources": list(self.resources),
                "operations": list(self.operations), "scope": scope}
        entry = {"name": self.name, "admissionReviewVersions": ["v1"], "sideEffects": "None",
                 "clientConfig": {"url": base_url + self.path, "caBundle": base64.b64encode(ca_bundle).decode()},
                 "rules": [rule]}
        entry.update({k: v for k, v in self.options.items() if k != "scope"})
        return entry


def _decorator(mutating: bool, api_version: str, resources: tuple[str, ...], operations: Iterable[str],
               name: str | None, options: dict[str, Any]) -> Callable[[Handler], Webhook]:
    if not resources:
        raise TypeError("a webhook names at least one resource (e.g. 'deployments', '*', 'pods/status')")

    def wrap(handler: Handler) -> Webhook:
        chosen = name or f"{handler.__name__.replace('_', '-').lower()}.webhooks.kplane.io"
        if not _NAME.match(chosen):
            raise ValueError(f"webhook name {chosen!r} must be a DNS name of at least three segments")
        return Webhook(handler, mutating, api_version, tuple(resources), tuple(operations), chosen, options)

    return wrap


def validating(api_version: str, *resources: str, operations: Iterable[str] = ("CREATE", "UPDATE"),
               name: str | None = None, **options: Any) -> Callable[[Handler], Webhook]:
    """A validating webhook for ``resources`` of ``api_version`` ("v1", "apps/v1", "*/*").

    ``options`` are further fields of the configuration entry in kube's spelling
    (``failurePolicy="Ignore"``, ``timeoutSeconds=5``, ``namespaceSelector={...}``,
    ``objectSelector``, ``matchConditions``, ``matchPolicy``, ``sideEffects``) and ``scope``
    ("Namespaced", "Cluster", "*") of the rule."""
    return _decorator(False, api_version, resources, operations, name, options)


def mutating(api_version: str, *resources: str, operations: Iterable[str] = ("CREATE", "UPDATE"),
             name: str | None = None, **options: Any) -> Callable[[Handler], Webhook]:
    """A mutating webhook: as :func:`validating`, plus ``reinvocationPolicy``."""
    return _decorator(True, api_version, resources, operations, name, options)


# -- JSONPatch of a handler's changes -------------------------------------------------------------
def json_patch(old: Any, new: Any, path: str = "") -> list[Obj]:
    """The RFC 6902 operations that turn ``old`` into ``new``: maps key by key, lists of equal
    length item by item, anything else replaced whole."""
    if isinstance(old, dict) and isinstance(new, dict):
        ops: list[Obj] = [{"op": "remove", "path": f"{path}/{_escape(k)}"} for k in old if k not in new]
        for key, value in new.items():
            if key not in old:
                ops.append({"op": "add", "path": f"{path}/{_escape(key)}", "value": value})
            else:
                ops += json_patch(old[key], value, f"{path}/{_escape(key)}")
        return ops
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [op for i, (a, b) in enumerate(zip(old, new)) for op in json_patch(a, b, f"{path}/{i}")]
    if old == new and type(old) is type(new):
        return []
    return [{"op": "replace", "path": path, "value": new}]


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


# -- answering reviews ----------------------------------------------------------------------------
async def _answer(webhook: Webhook, request: Obj) -> Obj:
    """The review's response: the handler's answer, its patch, warnings and audit annotations."""
    review = Review(request)
    result = webhook.handler(review) if inspect.iscoroutinefunction(webhook.handler) else \
        await asyncio.to_thread(webhook.handler, review)
    if inspect.isawaitable(result):  # a sync callable that handed back a coroutine
        result = await result
    verdict = _verdict(webhook, result)
    response: Obj = {"uid": request.get("uid", ""), "allowed": verdict.allowed}
    if not verdict.allowed:
        status: Obj = {"status": "Failure", "code": verdict.code, "message": verdict.message}
        if verdict.reason:
            status["reason"] = verdict.reason
        response["status"] = status
    elif webhook.mutating and verdict.object is not None:
        patch = json_patch(request.get("object"), verdict.object)
        if patch:
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
    if warnings := [*review.warnings, *verdict.warnings]:
        response["warnings"] = warnings
    if review.audit_annotations:
        response["auditAnnotations"] = {str(k): str(v) for k, v in review.audit_annotations.items()}
    return {"apiVersion": REVIEW_VERSION, "kind": "AdmissionReview", "response": response}


def _verdict(webhook: Webhook, result: Any) -> Verdict:
    if isinstance(result, Verdict):
        return result
    if result is None or result is True:
        return Verdict(True)
    if result is False:
        return Verdict(False, f"denied by {webhook.name}")
    if isinstance(result, str):
        return Verdict(False, result)
    if webhook.mutating and isinstance(result, dict):
        return Verdict(True, object=result)
    raise TypeError(f"webhook {webhook.name} returned {type(result).__name__}: "
                    f"expected None, a bool, a message{', an object' if webhook.mutating else ''} or a Verdict")


def _route(webhook: Webhook) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def serve(http: web.Request) -> web.Response:
        try:
            body = json.loads(await http.read())
        except web.HTTPRequestEntityTooLarge:
            raise
        except ValueError:
            return web.Response(status=400, text="the body is no JSON AdmissionReview\n")
        request = body.get("request") if isinstance(body, dict) else None
        if not isinstance(request, dict) or body.get("apiVersion") != REVIEW_VERSION or body.get("kind") != "AdmissionReview":
            return web.Response(status=400, text=f"expected an AdmissionReview of {REVIEW_VERSION} with a request\n")
        try:
            answer = await _answer(webhook, request)
        except Exception:  # the handler's bug: a 500 lets the API server apply failurePolicy
            log.exception("webhook %s failed", webhook.name)
            return web.Response(status=500, text=f"webhook {webhook.name} failed\n")
        return web.json_response(answer)

    return serve


# -- the server -----------------------------------------------------------------------------------
def kplane_ca(data_dir: str | Path) -> KeyPair:
    """The CA of a kplane server's data dir (``DATA_DIR/pki/ca.crt`` and ``ca.key``), to sign
    the webhook server's certificate with in place of a CA of its own."""
    pki = Path(data_dir) / "pki"
    return KeyPair.from_pem((pki / "ca.crt").read_bytes(), (pki / "ca.key").read_bytes())


class WebhookServer:
    """Serves webhooks over HTTPS (aiohttp) and keeps their configurations on an API server.

    ``async with WebhookServer(...) as server: await server.register(kubeconfig)`` in asyncio
    code (the configurations are deleted on exit), or ``with server.serving(target):`` from
    blocking code, which runs it all on an event loop in a thread of its own."""

    def __init__(self, *webhooks: Webhook, name: str = "kplane-webhooks", host: str = "127.0.0.1", port: int = 0,
                 ca: KeyPair | None = None) -> None:
        names = [w.name for w in webhooks]
        if len(set(names)) < len(names):
            raise ValueError(f"webhook names must be unique: {names}")
        self.webhooks, self.name, self.host, self.port = webhooks, name, host, port
        self.ca = ca or new_ca(f"{name}-ca")
        self._runner: web.AppRunner | None = None
        self._client: RESTClient | None = None  # made here from a kubeconfig, so closed here
        self._registered_with: RESTClient | None = None

    @property
    def url(self) -> str:
        return f"https://{self.host}:{self.port}"

    @property
    def ca_bundle(self) -> bytes:
        """The PEM of the CA the server's certificate is signed by: the configurations' caBundle."""
        return self.ca.cert_pem()

    # -- serving --
    async def start(self) -> None:
        app = web.Application(client_max_size=MAX_REVIEW_BYTES)
        for webhook in self.webhooks:
            app.router.add_post(webhook.path, _route(webhook))
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=self._tls())
        await site.start()
        self.port = self._runner.addresses[0][1]  # the port chosen when asked for 0

    def _tls(self) -> ssl.SSLContext:
        leaf = issue(self.ca, self.name, sans=SubjectAltNames.parse([self.host, "localhost"]), server=True)
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        load_cert_chain(ctx, leaf.cert_pem() + self.ca.cert_pem(), leaf.key_pem())
        return ctx

    async def stop(self) -> None:
        await self.unregister()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> WebhookServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- registering --
    def configurations(self) -> list[Obj]:
        """The Mutating- and ValidatingWebhookConfiguration (those with webhooks) named ``name``."""
        made = []
        for mutating, kind in ((True, "MutatingWebhookConfiguration"), (False, "ValidatingWebhookConfiguration")):
            entries = [w.entry(self.url, self.ca_bundle) for w in self.webhooks if w.mutating is mutating]
            if entries:
                made.append({"apiVersion": f"{GROUP}/{VERSION}", "kind": kind, "metadata": {"name": self.name},
                             "webhooks": entries})
        return made

    async def register(self, kubeconfig: str | Path | None = None, *, client: RESTClient | None = None) -> None:
        """Create (or replace) the configurations on the server a kubeconfig (or client) reaches."""
        if client is None:
            client = self._client = client_from_kubeconfig(kubeconfig)
        self._registered_with = client
        for config in self.configurations():
            resource = client.resource(GROUP, VERSION, config["kind"].lower() + "s")
            try:
                await resource.create(config)
            except ApiError as err:
                if err.code != 409:
                    raise
                existing = await resource.get(self.name)
                config["metadata"]["resourceVersion"] = existing["metadata"]["resourceVersion"]
                await resource.update(config)

    async def unregister(self) -> None:
        """Delete the configurations registered (none missing is an error)."""
        client = self._registered_with
        if client is None:
            return
        self._registered_with = None
        try:
            for config in self.configurations():
                with contextlib.suppress(ApiError):
                    await client.resource(GROUP, VERSION, config["kind"].lower() + "s").delete(self.name)
        finally:
            if self._client is not None:
                await self._client.close()
                self._client = None

    @contextlib.contextmanager
    def serving(self, target: Any = None, timeout: float = 30.0) -> Iterator[WebhookServer]:
        """From blocking code: serve on a loop in a thread, registered on ``target`` (the
        ``kplane`` fixture's cluster, a kubeconfig path, or None: serve without registering);
        deregistered and stopped on exit."""
        kubeconfig = getattr(target, "kubeconfig", target)
        ready = threading.Event()
        failure: list[BaseException] = []
        state: dict[str, Any] = {}

        async def main() -> None:
            state["loop"], state["stop"] = asyncio.get_running_loop(), asyncio.Event()
            try:
                await self.start()
                if kubeconfig is not None:
                    await self.register(kubeconfig)
            except BaseException as err:  # raised in the caller's thread
                failure.append(err)
                ready.set()
                await self.stop()
                return
            ready.set()
            try:
                await state["stop"].wait()
            finally:
                await self.stop()

        thread = threading.Thread(target=asyncio.run, args=(main(),), name=f"webhooks-{self.name}", daemon=True)
        thread.start()
        if not ready.wait(timeout):
            raise TimeoutError(f"webhook server {self.name} did not start within {timeout}s")
        if failure:
            raise RuntimeError(f"webhook server {self.name} failed to start: {failure[0]}") from failure[0]
        try:
            yield self
        finally:
            state["loop"].call_soon_threadsafe(state["stop"].set)
            thread.join(timeout)
