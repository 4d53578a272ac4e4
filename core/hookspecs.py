"""Every extension point of kplane: the plugin author's reference.

A plugin is a module (or object) with functions named like the hooks below, marked with
``@hookimpl``. Built-in API groups are plugins too; third-party ones are found through the
``kplane.plugins`` entry-point group of any installed distribution::

    # pyproject.toml of your distribution
    [project.entry-points."kplane.plugins"]
    widgets = "widgets_example.plugin"

The entry point's name (``widgets``) is the plugin's name: ``--disable-plugin widgets`` leaves it
out, ``--plugins core,widgets`` loads only those. kplane's own plugins load first, then the
others in the order of their names. ``kplane plugins`` lists what each one registered;
``GET /debug/plugins`` on a server says the same as JSON.

Start-up order
--------------

``kplane serve`` loads the plugins and calls ``kplane_add_options`` before it reads its command
line; then it opens storage and calls the other hooks in the order they appear here, each hook
on every plugin before the next hook, so a strategy may rely on every kind being registered:
``kplane_register_types``, ``kplane_register_conversions``,
``kplane_register_strategies``, ``kplane_register_admission``, ``kplane_register_authenticators``,
``kplane_register_authorizers``. Then it checks that every version
converts, calls ``kplane_register_filters`` and ``kplane_register_api_sources``, starts
listening, calls ``kplane_post_start``, starts the loopback informers, reports ready on
``/readyz`` and last calls ``kplane_register_controllers`` (unless ``--no-controllers``). On the
way down it calls ``kplane_shutdown``.

``kplane plugins`` calls these six registration hooks, against a scratch scheme with no storage,
and never starts the controllers; ``kplane controller-manager`` calls only
``kplane_register_controllers``.

Each hook is called on one plugin at a time: those whose ``@hookimpl`` says ``tryfirst=True``
first, then the others in load order, then those saying ``trylast=True``. A hook wrapper
(``@hookimpl(wrapper=True)``, pluggy's) runs around each plugin's call, and its ``plugin_name``
names the plugin it wraps; for an ``async def`` implementation it wraps the making of the
coroutine, which kplane awaits after.

Arguments
---------

A hook implementation takes only the arguments it names, in any order. Two are offered to every
hook: ``plugin_name`` (your plugin's name, for messages and for ``plugin=`` in
``Scheme.add_kind``) and ``config``, the server's :class:`~kplane.core.config.ServerConfig`
(its ``kplane serve`` flags; read it, never change it). It is None in ``kplane plugins`` and
in ``kplane_add_options``; ``kplane controller-manager`` gives one made of its own flags.
Any hook may be ``async def``; kplane awaits it. Return values are ignored.

When a plugin breaks
--------------------

If a plugin fails to import, its entry point names nothing, it implements a hook kplane does
not have, a hook raises, or it registers a kind, resource or strategy another plugin already
registered, ``kplane serve`` and ``kplane plugins`` stop with exit code 1 and one line naming the
plugin, its distribution and the problem, with the file and line of your package where it was
raised::

    kplane: plugin 'widgets' (kplane-widgets 0.1.0) failed in kplane_register_strategies: KeyError: 'v2' (widgets_example/plugin.py, line 31)

With ``--skip-broken-plugins`` the server logs that as a warning and starts without the plugin:
everything its hooks added, even in hooks that succeeded, is taken out again (objects a
post-start hook wrote to storage stay), and of two plugins claiming one kind the later one is
skipped. ``kplane plugins --skip-broken-plugins`` and ``GET /debug/plugins`` list it as
``skipped``, with the problem. ``-v`` shows the traceback.

The broken plugin is the one whose code raised: of a plugin's implementation and the hook
wrappers around it, the one whose hook function is deepest in the traceback. So a wrapper that
raises (before or after its ``yield``) is named itself, and with ``--skip-broken-plugins`` it is
taken out: what the call it broke had added is undone and the wrapped plugin's implementation is
called once more, without it. An error of the implementation that merely passes through a
wrapper stays the implementation's. A wrapper should observe, not register: what it adds in a
call that succeeds counts as the wrapped plugin's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from kplane.core.authn.authenticators import Authenticators
    from kplane.core.authz.authorizers import Authorizers
    from kplane.core.pluginoptions import PluginOptions
    from kplane.core.client.informer import SharedInformerFactory
    from kplane.core.controllers.manager import ControllerManager
    from kplane.core.registry.admission import AdmissionChain
    from kplane.core.registry.registry import Registry
    from kplane.core.runtime.scheme import Scheme
    from kplane.core.config import ServerConfig
    from kplane.core.server.apisources import APISources
    from kplane.core.server.filterchain import FilterChain

PROJECT = "kplane"
hookspec = pluggy.HookspecMarker(PROJECT)
#: Marks a plugin's hook implementations: ``@hookimpl``, or ``@hookimpl(tryfirst=True)`` and pluggy's other options.
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def kplane_add_options(parser: PluginOptions, plugin_name: str, config: ServerConfig | None) -> None:
    """Add ``kplane serve`` flags for your plugin (pytest's ``pytest_addoption``).

    When: first, in ``kplane serve`` (also for ``--help``, which lists the flags under your
    plugin's name) and in the pytest plugin's ``kplane`` fixture, before the command line is read
    and before any event loop runs, so it must not be ``async``. A server an embedder builds from
    its own ``ServerConfig`` does not call it.

    Receives:

    - ``parser``: a :class:`~kplane.core.pluginoptions.PluginOptions`. ``parser.add_argument``
      takes argparse's arguments; a flag or ``dest`` another flag has makes your plugin the
      broken one. Each flag's value reaches your other hooks as
      ``config.plugin_settings[plugin_name][dest]``; a test sets it with
      ``@pytest.mark.kplane(dest=value)``. Flags share one namespace: make each ``dest`` yours
      (``widgets_size``, not ``size``).
    - ``plugin_name``: your plugin's name.
    - ``config``: always None here: the configuration is made from the flags.

    Returns: nothing.

    Example::

        @hookimpl
        def kplane_add_options(parser):
            parser.add_argument("--widgets-max-size", dest="widgets_max_size", type=int,
                                default=10, metavar="N", help="largest widget allowed (default 10)")
    """


@hookspec
def kplane_register_types(scheme: Scheme, plugin_name: str, config: ServerConfig | None) -> None:
    """Register your kinds: internal type, one schema per served version, storage version.

    When: first of the registration hooks, once per plugin, before any other hook but
    ``kplane_add_options`` (in ``kplane serve``, storage is open and nothing is served yet).

    Receives:

    - ``scheme``: the server's :class:`~kplane.core.runtime.scheme.Scheme`. Call ``scheme.add_kind``
      once per kind and ``scheme.set_version_priority`` once per group (the first version is the
      one discovery prefers).
    - ``plugin_name``: your plugin's name; pass it as ``plugin=`` so that errors and
      ``kplane plugins`` can name you.
    - ``config``: the server's configuration, or None (see Arguments above).

    Returns: nothing. ``add_kind`` raises ``ConflictError`` (a ``ValueError``) if the group
    already has that resource or that kind, registered by another plugin; then your plugin is the
    broken one, and with ``--skip-broken-plugins`` it is left out.

    Example::

        @hookimpl
        def kplane_register_types(scheme, plugin_name):
            scheme.add_kind(group="widgets.example.com", kind="Widget", plural="widgets",
                            internal=types.Widget, versions={"v1": v1.WidgetSchema},
                            storage_version="v1", short_names=["wd"], plugin=plugin_name)
            scheme.set_version_priority("widgets.example.com", ["v1"])
    """


@hookspec
def kplane_register_conversions(scheme: Scheme, plugin_name: str, config: ServerConfig | None) -> None:
    """Register hand-written conversions and per-version defaulting.

    When: second, once every plugin's kinds are registered.

    Receives:

    - ``scheme``: the same :class:`~kplane.core.runtime.scheme.Scheme`. A version whose schema has the
      internal shape converts automatically. Where shapes differ, ``scheme.add_conversion``
      takes two functions over Python-named dicts; ``scheme.add_defaulter`` adds a function run
      in place on a version's decoded data before conversion; ``scheme.add_protobuf`` accepts
      protobuf bodies of a kind.
    - ``plugin_name``: your plugin's name.
    - ``config``: the server's configuration, or None (see Arguments above).

    Returns: nothing. Once the admission hooks have run, every version of your kinds must
    convert: a field of a version schema with no counterpart in the internal type, and no
    conversion, stops the start naming your plugin and the field.

    Example::

        @hookimpl
        def kplane_register_conversions(scheme):
            scheme.add_conversion("widgets.example.com", "v1alpha1", "Widget",
                                  to_internal=v1alpha1.to_internal,
                                  from_internal=v1alpha1.from_internal)
            scheme.add_defaulter("widgets.example.com", "v1", "Widget", v1.set_defaults)
    """


@hookspec
def kplane_register_strategies(
    registry: Registry, authenticators: Authenticators, authorizers: Authorizers, plugin_name: str,
    config: ServerConfig | None,
) -> None:
    """Give each resource its behaviour: a :class:`~kplane.core.registry.strategy.Strategy`.

    When: third, once every plugin's kinds and conversions are registered.

    Receives:

    - ``registry``: the server's :class:`~kplane.core.registry.registry.Registry`. Register the main
      resource and each subresource (``"status"``) separately with ``registry.add_strategy``: a
      subresource's strategy reads and writes the parent (get, update, patch), or, with an
      ``apply_post`` method, takes a POSTed body (create, as ``pods/binding``);
      ``registry.add_scale`` serves a ``scale`` subresource.
      ``registry.add_subresource(group, plural, subresource, served)`` serves one with an
      object of your own: a ``Served`` (kplane.api) with the capabilities it has (``Getter``,
      ``Creater`` of a kind of its own, as ``pods/eviction``, or a ``Connecter`` streaming its
      answer through an ``Exchange`` for the HTTP methods of its ``connect_methods``, as
      ``pods/log`` or ``exec``); it finds its parent through ``registry.rest(group, plural)``
      on each request. ``registry.add_rest(group, plural, served)`` serves a whole resource that
      is never stored (a review, such as TokenReview or SubjectAccessReview) with a ``Served``
      that is a ``Creater`` only: its ``create`` takes the decoded internal object and returns
      the one to answer with. The verbs served, and listed by discovery and OpenAPI, are those of the
      object serving each one (:mod:`kplane.core.registry.rest`; a connect method stands for
      its verb, GET for get, POST for create), narrowed by a strategy's ``verbs``.
    - ``authenticators``: the server's :class:`~kplane.core.authn.authenticators.Authenticators`,
      for a resource that reviews credentials (TokenReview awaits
      ``authenticators.authenticate_token(token, audiences)``), as kube-apiserver hands its
      authentication storage the server's authenticator. Add authenticators in
      ``kplane_register_authenticators``, not here.
    - ``authorizers``: the server's :class:`~kplane.core.authz.authorizers.Authorizers`, for a
      resource that reviews access (SubjectAccessReview awaits ``authorizers.authorize(attributes)``
      and ``authorizers.rules_for(user, namespace)``). Whom a request acts as reaches the serving
      object as ``ctx.user`` (a ``UserInfo``, after impersonation) on its ``RequestContext``.
    - ``plugin_name``: your plugin's name.
    - ``config``: the server's configuration, or None (see Arguments above).

    Returns: nothing. A kind without a strategy gets the default one (no extra validation, no
    subresources). A strategy or subresource for a resource another plugin registered, or for
    one nobody registered (a misspelt plural), makes your plugin the broken one; so does a
    subresource served two ways (a strategy and ``add_subresource``).

    Example::

        @hookimpl
        def kplane_register_strategies(registry):
            registry.add_strategy("widgets.example.com", "widgets", WidgetStrategy())
            registry.add_strategy("widgets.example.com", "widgets", WidgetStatusStrategy(),
                                  subresource="status")
            registry.add_subresource("widgets.example.com", "widgets", "log", WidgetLog(registry))
    """


@hookspec
def kplane_register_admission(
    chain: AdmissionChain, registry: Registry, informers: SharedInformerFactory | None, plugin_name: str,
    config: ServerConfig | None,
) -> None:
    """Add admission plugins, run on every write after decoding and before storage.

    When: fourth, once every strategy is registered and before the server listens.

    Receives:

    - ``chain``: the server's :class:`~kplane.core.registry.admission.AdmissionChain`. Mutating plugins
      (``chain.add_mutating(name, function)``) may change ``request.obj``; validating plugins
      (``chain.add_validating(name, function)``) reject a request by raising
      ``deny(request, "why")`` (403). Functions take an ``AdmissionRequest`` and may be ``async``.
      Added with ``connect=True``, a plugin also sees ``Operation.CONNECT`` requests (``pods/exec``,
      ``attach``, ``portforward``, the proxies), whose ``request.obj`` is the options' wire dict.
    - ``registry``: the :class:`~kplane.core.registry.registry.Registry`, to read other objects, e.g.
      the namespace a request writes into.
    - ``informers``: a :class:`~kplane.core.client.informer.SharedInformerFactory` on the server's own
      loopback client, for plugins that decide from a cached view of other objects
      (kube-apiserver hands its admission plugins loopback informers the same way). Informers
      asked for here start once the server listens, after the post-start hooks, and stop with it.
      Until an informer's ``synced`` event is set its lister is empty, so wait for it (or refuse).
      ``informers`` is None when the plugins are only inspected (``kplane plugins``).
    - ``plugin_name``: your plugin's name.
    - ``config``: the server's configuration, or None (see Arguments above).

    Returns: nothing.

    Example::

        @hookimpl
        def kplane_register_admission(chain, informers):
            chain.add_validating("NoRedWidgets", no_red_widgets)
            if informers is not None:
                fischers = informers.informer("wardle.example.com", "v1alpha1", "fischers")
                chain.add_mutating("BanFlunder", BanFlunder(fischers))
    """


@hookspec
def kplane_register_authenticators(
    authenticators: Authenticators, registry: Registry, informers: SharedInformerFactory | None, plugin_name: str,
    config: ServerConfig | None,
) -> None:
    """Add ways to tell who sends a request: a bearer token's user (ServiceAccount tokens), or
    a user found in the request itself.

    When: fifth, once every plugin's admission is registered.

    Receives:

    - ``authenticators``: the server's :class:`~kplane.core.authn.authenticators.Authenticators`.
      ``authenticators.add_token(name, a)`` gives every bearer token to
      ``a.authenticate_token(token, audiences)``; ``authenticators.add_request(name, a)`` asks
      ``a.authenticate_request(request)`` about every request before any token is looked at. Each returns an ``Authenticated(user)``,
      None when the credentials are not its own, or raises ``AuthenticationError`` when they are
      its own and not good (the client gets a 401, never anonymity). kplane's own (client
      certificates, ``--token-auth-file``, the server's loopback clients) come first.
    - ``registry``: the :class:`~kplane.core.registry.registry.Registry`.
    - ``informers``: the loopback informers (as in ``kplane_register_admission``; None in
      ``kplane plugins``), for authenticators that check what they find against cached objects.
    - ``plugin_name``: your plugin's name.
    - ``config``: the server's configuration, or None (see Arguments above).

    Returns: nothing.

    Example::

        @hookimpl
        def kplane_register_authenticators(authenticators):
            authenticators.add_token("WidgetKeys", WidgetKeys())  # authenticate_token(token, audiences)
    """


@hookspec
def kplane_register_authorizers(
    authorizers: Authorizers, registry: Registry, informers: SharedInformerFactory | None, plugin_name: str,
    config: ServerConfig | None,
) -> None:
    """Offer an authorization mode that ``--authorization-mode`` may name (``RBAC``).

    When: sixth, right after ``kplane_register_authenticators``.

    Receives:

    - ``authorizers``: the server's :class:`~kplane.core.authz.authorizers.Authorizers`.
      ``authorizers.add(mode, a)``: when ``--authorization-mode`` names ``mode``, every request
      not from ``system:masters`` is given to ``a.authorize(attributes)``, awaited (an
      :class:`~kplane.core.authz.attributes.Attributes`), which answers a ``Verdict``: allow,
      deny, or no opinion (the next mode decides; when none allows, the request is a 403). An
      authorizer that can list what it allows also has ``async rules_for(user, namespace)``
      (SelfSubjectRulesReview). Decide from memory (informers), never with a request per request.
    - ``registry``: the :class:`~kplane.core.registry.registry.Registry`.
    - ``informers``: the loopback informers (None in ``kplane plugins``).
    - ``plugin_name``: your plugin's name.
    - ``config``: the server's configuration, or None (see Arguments above).

    Returns: nothing. A mode named twice makes the later plugin the broken one.

    Example::

        @hookimpl
        def kplane_register_authorizers(authorizers, informers):
            authorizers.add("WidgetOwners", WidgetOwners(informers.informer("widgets.example.com", "v1", "widgets")))
    """


@hookspec
def kplane_register_filters(
    filters: FilterChain, registry: Registry, informers: SharedInformerFactory, plugin_name: str,
    config: ServerConfig | None,
) -> None:
    """Add request filters: aiohttp middlewares every request passes before the routes, at a
    stage of kube-apiserver's handler chain (authentication, audit, impersonation, authorization,
    proxy).

    When: seventh, in ``kplane serve`` only, once every plugin's authorizers are registered and
    before the server listens.

    Receives:

    - ``filters``: the server's :class:`~kplane.core.server.filterchain.FilterChain`.
      ``filters.add(stage, name, function)`` runs ``function(request, handler)`` at ``stage``
      (``AUTHENTICATION``, ``AUDIT``, ``IMPERSONATION``, ``AUTHORIZATION`` or ``PROXY``, in
      that order, after kplane's own error, max in-flight and timeout filters); it answers
      itself or returns ``await handler(request)``, and an ``APIError`` it raises is answered
      as a Status.
    - ``registry``: the :class:`~kplane.core.registry.registry.Registry`.
    - ``informers``: the loopback :class:`~kplane.core.client.informer.SharedInformerFactory`
      (as in ``kplane_register_admission``); ``informers.client`` is the server's loopback
      :class:`~kplane.core.client.rest.RESTClient`, which the server's limits let through.
    - ``plugin_name``: your plugin's name.
    - ``config``: the server's configuration (see Arguments above).

    Returns: nothing.

    Example::

        @hookimpl
        def kplane_register_filters(filters):
            async def tag(request, handler):
                response = await handler(request)
                response.headers["X-Widgets"] = "seen"
                return response
            filters.add(AUDIT, "WidgetTag", tag)
    """


@hookspec
def kplane_register_api_sources(
    sources: APISources, registry: Registry, informers: SharedInformerFactory, plugin_name: str,
    config: ServerConfig | None,
) -> None:
    """List group/versions in discovery and OpenAPI beyond the scheme's: those another server
    serves behind your proxy filter, and the rank of every group (kube-aggregator's APIServices).

    When: eighth, in ``kplane serve`` only, right after ``kplane_register_filters``.

    Receives:

    - ``sources``: the server's :class:`~kplane.core.server.apisources.APISources`.
      ``sources.add(name, source)`` adds an object whose ``listed(served)`` returns
      ``ListedVersion`` entries (group, version, priorities, and for a version served
      elsewhere a ``RemoteVersion`` telling its discovery entry and OpenAPI index entry). It is
      asked on every discovery and OpenAPI index request, so keep it cheap.
    - ``registry``: the :class:`~kplane.core.registry.registry.Registry`.
    - ``informers``: the loopback informers, as in ``kplane_register_filters``.
    - ``plugin_name``: your plugin's name.
    - ``config``: the server's configuration (see Arguments above).

    Returns: nothing.

    Example::

        @hookimpl
        def kplane_register_api_sources(sources):
            sources.add("widgets-first", WidgetsFirst())  # listed(served): widgets.example.com ranks 20000
    """


@hookspec
async def kplane_post_start(registry: Registry, server_url: str, plugin_name: str, config: ServerConfig | None) -> None:
    """Create what must exist before the server reports ready, such as the ``default``
    namespace (kube-apiserver's post-start hooks).

    When: ninth, in ``kplane serve`` only, once the server listens on its port and before the
    loopback informers start and ``/readyz`` answers ok. It runs on every start, and with several
    servers on one storage, on each of them: it must be idempotent (and expect 409 Conflict
    when another server created the object first).

    Receives:

    - ``registry``: the :class:`~kplane.core.registry.registry.Registry`;
      ``registry.store(group, plural)`` reads and writes objects in storage, through
      strategies and admission.
    - ``server_url``: the address the server listens on (``https://127.0.0.1:6443``), for
      objects that point at it (the ``default/kubernetes`` Service).
    - ``plugin_name``: your plugin's name.
    - ``config``: the server's configuration, or None (see Arguments above).

    Returns: nothing. Usually ``async``, since stores are.

    Example::

        @hookimpl
        async def kplane_post_start(registry):
            store = registry.store("", "namespaces")
            if await store.get_internal("", "widgets-system") is None:
                namespace = Namespace()
                namespace.metadata.name = "widgets-system"
                await store.create(RequestContext(resource="namespaces", name="widgets-system"),
                                   namespace)
    """


@hookspec
def kplane_register_controllers(manager: ControllerManager, plugin_name: str, config: ServerConfig | None) -> None:
    """Add controllers for the controller-manager to run.

    When: last of the start, in ``kplane serve`` once the server is ready (not with ``--no-controllers``),
    and in ``kplane controller-manager``. A server under leader election that loses the Lease
    builds a new manager, and so calls this again, before it stands for election again.

    Receives:

    - ``manager``: a :class:`~kplane.core.controllers.manager.ControllerManager`, not started yet.
      ``manager.add(name, controller)`` adds a controller: an object with
      ``async def run(self)`` that works until cancelled. It reaches the server like any other
      client, through a :class:`~kplane.core.client.rest.RESTClient`, and shares informers
      through ``manager.informers``. ``--controllers`` chooses by ``name``. Which client:

      - ``manager.client_for(account)``: its own identity, ServiceAccount ``kube-system/<account>``
        (as kube-controller-manager's ``--use-service-account-credentials``): in ``kplane serve``
        always, in ``kplane controller-manager`` with that flag (else the kubeconfig's user).
        Under RBAC it may do only what is granted to that account: kplane's own controllers have
        bootstrap roles (``system:controller:<account>``); yours need a ClusterRole and binding
        you create.
      - ``manager.client``: the controller-manager's own identity (the informers', the Lease's;
        in ``kplane serve`` the server's loopback user, in ``system:masters``).
    - ``plugin_name``: your plugin's name.
    - ``config``: the server's configuration, or None (see Arguments above).

    Returns: nothing.

    Example::

        @hookimpl
        def kplane_register_controllers(manager):
            manager.add("widget-sizer", WidgetSizer(manager.client_for("widget-sizer"), manager.informers))
    """


@hookspec
async def kplane_shutdown(registry: Registry, plugin_name: str, config: ServerConfig | None) -> None:
    """Stop what your ``kplane_post_start`` started: background tasks, sessions, informers of
    your own (kube-apiserver's pre-shutdown hooks).

    When: in ``kplane serve`` only, as the server stops: after its controllers stopped and
    before the loopback informers, the listener and storage close; plugins in the reverse of
    the ``kplane_post_start`` order, then those without a ``kplane_post_start``, last loaded
    first. Also when the start failed midway, so expect that ``kplane_post_start`` never ran,
    and when ``--skip-broken-plugins`` takes your plugin out once ``kplane_register_filters``
    was called (then at once, before it is taken out; it gets no second call).

    Receives:

    - ``registry``: the :class:`~kplane.core.registry.registry.Registry` your other hooks got,
      which tells one server from another in a process running several.
    - ``plugin_name``: your plugin's name.
    - ``config``: the server's configuration (see Arguments above).

    Returns: nothing. What it raises is logged; the other plugins shut down all the same.

    Example::

        @hookimpl
        async def kplane_shutdown(registry):
            task = refreshers.pop(registry, None)
            if task is not None:
                task.cancel()
    """
