"""The plugin API: everything an API group, an example or a controller may import from kplane.

A plugin imports from here and from nowhere else in kplane
(``from kplane.api import Schema, Strategy, hookimpl``); the rest of ``kplane.core`` is the
machinery's own and may change between releases. ``make test`` checks this with an import
contract (``.importlinter``). The hooks themselves, with their arguments, are in
:mod:`kplane.core.hookspecs`; ``docs/hooks.md`` lists both, generated from the code, and
``docs/writing-a-plugin.md`` walks through a whole plugin.

The names come in the order a plugin needs them: the hook marker; types and schemas (internal
dataclasses, versioned marshmallow schemas, their field types, protobuf tables); behaviour
(strategies, subresources, printing, admission, and ``Served`` with the capabilities, ``Getter``
to ``Connecter``, of a subresource a plugin serves with an object of its own); the HTTP side
(request filters and their stages, discovery and OpenAPI sources); errors and validation;
selectors; and the client side (REST client, informers, listers, work queue, events, and the
controller toolkit: claiming owned objects, conditions, replica arithmetic, involved objects),
which is also all a controller may use;
last, what a distribution adding a storage backend implements (the ``storage`` contract module
and the ``Backend`` its entry point names).
"""

from __future__ import annotations

# -- hooks ----------------------------------------------------------------------------------------
from kplane.core.hookspecs import hookimpl
from kplane.core.config import ServerConfig  # every hook's ``config``
from kplane.core.pluginoptions import PluginOptions  # kplane_add_options' ``parser``
from kplane.core.server.filters import parse_duration  # a flag's Go duration (``1h30m``) in seconds
from kplane.core import privatefiles  # files only their owner may read (keys), written 0600 in 0700 folders

# -- types and schemas ----------------------------------------------------------------------------
from kplane.core.meta import clock
from kplane.core.meta import quantity  # resource.Quantity arithmetic: parse, add, compare, canonical form
from kplane.core import cel  # the one CEL environment and Kubernetes' CEL libraries (CRD rules, admission expressions)
from kplane.core.meta.rand import new_uid, safe_encode_string  # a random UUID (without a GIL release per call)
from kplane.core.meta.protobuf import (
    CONDITION, EXTRA_VALUE, INT_OR_STRING, LABEL_SELECTOR, LABEL_SELECTOR_REQUIREMENT, MICRO_TIME, OBJECT_META, QUANTITY,
    TIME,
)
from kplane.core.meta.schemas import ConditionSchema, LabelSelectorRequirementSchema, LabelSelectorSchema, ObjectMetaSchema
from kplane.core.meta.types import Condition, LabelSelector, LabelSelectorRequirement, ObjectMeta
from kplane.core.runtime import fields
from kplane.core.runtime.gvk import GroupVersionKind
from kplane.core.runtime.objects import build, unbuild
from kplane.core.runtime.protobuf import Field, Message
from kplane.core.runtime.schema import Loaded, Schema, Shape, camel_case, load, python_to_wire, shape_of, wire_to_python
from kplane.core.runtime.scheme import IGNORE, STRICT, WARN, ConflictError, DecodeError, ResourceType, Scheme, Version

# -- behaviour: strategies, subresources, capabilities, printing, admission -----------------------
from kplane.core.registry.admission import AdmissionChain, AdmissionRequest, Operation, deny
from kplane.core.meta.deleteoptions import DeleteOptions, Preconditions
from kplane.core.meta import deleteoptions  # DeleteOptions inside another body (an Eviction's): decode, schema
from kplane.core.meta.protobuf import DELETE_OPTIONS  # the protobuf table of DeleteOptions, inside another message (an Eviction)
from kplane.core.registry.options import ListOptions
from kplane.core.registry.options import WatchOptions  # a Store.watch's (streaming subresources follow their object)
from kplane.core.registry.printing import AGE, NAME, Column, age, dig
from kplane.core.registry.printing import human_duration  # kubectl's durations (a Job's Duration column)
from kplane.core.registry.registry import Registry
from kplane.core.registry.rest import (
    Connecter, Creater, Exchange, Getter, GracefulDeleter, Patcher, Served, Updater, UpdateFunc, WebSocket,
)
from kplane.core.registry.scale import ScaleAdapter
from kplane.core.registry.store import Store
from kplane.core.registry.store import ListPage  # what a Lister of a resource served without storage answers
from kplane.core.registry.strategy import RESOURCE_VERBS, SUBRESOURCE_VERBS, RequestContext, Strategy

# -- the HTTP side: request filters, discovery and OpenAPI sources -------------------------------
from kplane.core.server.apisources import APISource, APISources, ListedVersion, RemoteVersion
from kplane.core.server.filterchain import (
    AUDIT, AUTHENTICATION, AUTHORIZATION, IMPERSONATION, PROXY, STAGES, FilterChain,
)
from kplane.core.server.discovery import AGGREGATED as AGGREGATED_DISCOVERY
from kplane.core.server.filters import Handler

# -- identity: who sends a request, and what they may do ----------------------------------------
from kplane.core.authn import user
from kplane.core.authn.authenticators import (
    Authenticated, AuthenticationError, Authenticators, RequestAuthenticator, StaticTokens, TokenAuthenticator,
)
from kplane.core.authn.filter import user_of
from kplane.core.authn.user import UserInfo
from kplane.core.authz.attributes import Attributes
from kplane.core.authz.authorizers import (
    ALLOWED, NO_OPINION, Authorizer, Authorizers, Decision, NonResourceRule, ResourceRule, RuleResolver, Rules, Verdict,
)

# -- errors and validation ------------------------------------------------------------------------
from kplane.core.meta import errors
from kplane.core.meta.errors import (
    APIError, FieldError, FieldErrorType, duplicate, forbidden, internal, invalid, not_supported, required, too_long, too_many,
)
from kplane.core.meta.validation import (
    FIELD_IMMUTABLE, is_dns1035_label, is_dns1123_label, is_dns1123_subdomain, is_path_segment_name,
    is_qualified_name, is_valid_label_value, validate_annotations, validate_labels, validate_object_meta,
)
from kplane.core.meta.validation import (  # a webhook's clientConfig and review versions (CRD conversion, admission)
    validate_review_versions, validate_webhook_service, validate_webhook_url,
)

# -- selectors ------------------------------------------------------------------------------------
from kplane.core.meta.selectors import (
    META_FIELDS, FieldPath, LabelSelectorExpr, bool_field, format_label_selector, label_selector_from_internal,
    validate_label_selector,
)
from kplane.core.meta.selectors import parse_field_selector, parse_label_selector  # selectors' text (a WatchOptions', Scale's status.selector)

# -- the client side: what controllers use --------------------------------------------------------
from kplane.core.client.cache import Lister, object_key
from kplane.core.client.discovery import server_resources
from kplane.core.client.events import NORMAL, WARNING, EventRecorder
from kplane.core.client.informer import Handlers, Informer, SharedInformerFactory, wait_synced
from kplane.core.client.kubeconfig import ClientConfig, KubeconfigError, load_kubeconfig
from kplane.core.client.leaderelection import micro_time  # a Lease's renewTime (node heartbeats)
from kplane.core.client.rest import ApiError, ResourceClient, RESTClient
from kplane.core.client.services import (
    CallError, ServiceLookup, ServiceTarget, TLSContexts, UnreachableError, WebhookClient, describe_error, max_answer,
    service_target,
)
from kplane.core.client.tls import TLSClientConfig
from kplane.core.client.workqueue import (
    BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter, ShutDown, WorkQueue,
)
from kplane.core.controllers import ownership
from kplane.core.controllers.claiming import ControllerRefManager
from kplane.core.controllers.conditions import (
    get_condition, new_condition, remove_condition, replace_condition, set_condition,
)
from kplane.core.controllers.manager import ControllerManager
from kplane.core.controllers.ownership import controller_ref, controller_reference, uid
from kplane.core.controllers.ownwrites import OwnWrites  # replies to a controller's writes its cache lags behind
from kplane.core.controllers.references import involved_object
from kplane.core.controllers.replicas import resolve_fenceposts, scaled_value, spec_replicas
from kplane.core.controllers.worker import CacheBehind, Workers, work
from kplane.core.managedfields.applyconfig import ApplyConfigurationError, merge_configuration  # an apply configuration merged without ownership (mutating policies)
from kplane.core.patching.errors import PatchError  # a JSON patch that does not apply
from kplane.core.patching.jsonpatch import apply_json_patch  # RFC 6902 patches (mutating webhooks' and policies')
from kplane.core.patching.mediatypes import APPLY_PATCH, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH

# -- storage backends: what a ``kplane.storage`` entry point names and returns --------------------
from kplane.core.storage import interface as storage
from kplane.core.storage.factory import Backend, StorageURLError

# Everything imported above, and nothing else, is the plugin API (pytest's assertion rewriting,
# which covers kplane's modules as those of a pytest plugin, adds globals that are no identifiers).
__all__ = sorted(name for name in dir() if name.isidentifier() and not name.startswith("_") and name != "annotations")
