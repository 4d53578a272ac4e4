"""``--encryption-provider-config``: Kubernetes' ``EncryptionConfiguration`` file, read, checked and
turned into one transformer per resource, as k8s.io/apiserver's ``server/options/encryptionconfig``
and ``apis/apiserver/validation`` do (same field paths and messages; KMS is not offered).

A resource is ``plural`` (core group), ``plural.group``, ``*.group`` (every resource of a group),
``*.`` (every core resource) or ``*.*`` (everything, custom resources too). Rules are matched by
exact resource, then the group's wildcard, then ``*.*``; a resource no rule names is stored as is.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kplane.core.storage.keys import resource_of_key
from kplane.core.storage.transformers import (
    AESCBC_PREFIX,
    AESGCM_PREFIX,
    SECRETBOX_PREFIX,
    AESCBCTransformer,
    AESGCMTransformer,
    Identity,
    Prefixed,
    PrefixTransformers,
    SecretboxTransformer,
    Transformer,
)

GROUP = "apiserver.config.k8s.io"
KIND = "EncryptionConfiguration"
# Kubernetes also reads the kind its early documentation showed (registered "due to a docs bug").
ACCEPTED = {(f"{GROUP}/v1", KIND), ("v1", "EncryptionConfig")}
MAX_FILE_BYTES = 1 << 20  # a configuration file is a few kilobytes
AES_KEY_SIZES = (16, 24, 32)  # aesgcm and aescbc alike, as Kubernetes' validation allows
SECRETBOX_KEY_SIZES = (32,)
PROVIDERS = ("aesgcm", "aescbc", "secretbox", "identity", "kms")

GroupResource = tuple[str, str]  # (group, resource); "*" is a wildcard in either
ANY = ("*", "*")


class EncryptionConfigError(ValueError):
    """The file cannot be used; the message names the file and every problem, never a secret."""


@dataclass(frozen=True, slots=True)
class EncryptionConfig:
    """The transformers of a loaded file, by the resource (or wildcard) they were given for."""

    rules: dict[GroupResource, Transformer]

    def transformer_for(self, group: str, resource: str) -> Transformer | None:
        """The transformer of a resource (``transformerFromOverrides``), None: stored as is."""
        rules = self.rules
        return rules.get((group, resource)) or rules.get((group, "*")) or rules.get(ANY)

    def transformer_for_key(self, key: str) -> Transformer | None:
        """The transformer of the resource whose objects' keys ``key`` is one of."""
        resource = resource_of_key(key)
        return None if resource is None else self.transformer_for(*resource)


def parse_group_resource(text: str) -> GroupResource:
    """``schema.ParseGroupResource``: the resource is up to the first dot, the group after it."""
    resource, dot, group = text.partition(".")
    return (group, resource) if dot else ("", text)


def load_encryption_config(path: Path) -> EncryptionConfig:
    """Read, decode, validate and build the file at ``path``; EncryptionConfigError if unusable."""
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        raise EncryptionConfigError(
            f'error reading encryption provider configuration file "{path}": {err.strerror}') from None
    if not data.strip():
        raise EncryptionConfigError(f'encryption provider configuration file "{path}" is empty')
    if len(data) > MAX_FILE_BYTES:
        raise EncryptionConfigError(
            f'encryption provider configuration file "{path}" is larger than {MAX_FILE_BYTES} bytes')
    try:
        document = _decode(data)
    except EncryptionConfigError as err:
        raise EncryptionConfigError(f'error decoding encryption provider configuration file "{path}": {err}') from None
    problems = _validate(document)
    if problems:
        raise EncryptionConfigError(f'error while parsing file "{path}": {_aggregate(problems)}')
    try:
        return EncryptionConfig(_build(document))
    except EncryptionConfigError as err:
        raise EncryptionConfigError(f'error while building transformers from "{path}": {err}') from None


# -- decoding: the shape of the document, strictly (unknown fields are errors) --------------------

def _decode(data: bytes) -> dict[str, Any]:
    """The document (YAML or JSON), checked against the types' fields and kinds."""
    try:
        document = yaml.safe_load(data)
    except yaml.YAMLError as err:
        raise EncryptionConfigError(f"not YAML or JSON: {_yaml_problem(err)}") from None
    if not isinstance(document, dict):
        raise EncryptionConfigError("expected an object")
    api_version, kind = document.get("apiVersion"), document.get("kind")
    if not kind:
        raise EncryptionConfigError("Object 'Kind' is missing")
    if (api_version, kind) not in ACCEPTED:
        raise EncryptionConfigError(f'no kind "{kind}" is registered for version "{api_version}"')
    unknown: list[str] = []
    _check_fields(document, {"apiVersion": str, "kind": str, "resources": list}, "", unknown)
    for i, rule in enumerate(document.get("resources") or ()):
        at = f"resources[{i}]"
        _check_object(rule, at)
        _check_fields(rule, {"resources": list, "providers": list}, at, unknown)
        for j, name in enumerate(rule.get("resources") or ()):
            if not isinstance(name, str):
                raise EncryptionConfigError(f"{at}.resources[{j}]: expected a string")
        for j, provider in enumerate(rule.get("providers") or ()):
            _check_provider(provider, f"{at}.providers[{j}]", unknown)
    if unknown:
        raise EncryptionConfigError(f"strict decoding error: {', '.join(f'unknown field {u!r}' for u in unknown)}")
    return document


def _check_provider(provider: Any, at: str, unknown: list[str]) -> None:
    _check_object(provider, at)
    _check_fields(provider, dict.fromkeys(PROVIDERS, dict), at, unknown)
    for name in ("aesgcm", "aescbc", "secretbox"):
        if provider.get(name) is not None:
            _check_fields(provider[name], {"keys": list}, f"{at}.{name}", unknown)
            for k, key in enumerate(provider[name].get("keys") or ()):
                _check_object(key, f"{at}.{name}.keys[{k}]")
                _check_fields(key, {"name": str, "secret": str}, f"{at}.{name}.keys[{k}]", unknown)
    if provider.get("identity") is not None:
        _check_fields(provider["identity"], {}, f"{at}.identity", unknown)


def _check_object(value: Any, at: str) -> None:
    if not isinstance(value, dict):
        raise EncryptionConfigError(f"{at}: expected an object")


def _check_fields(obj: dict[str, Any], fields: dict[str, type], at: str, unknown: list[str]) -> None:
    """Each known field of ``obj`` has its type (null is as good as absent); others are unknown."""
    for name, value in obj.items():
        path = f"{at}.{name}" if at else str(name)
        if name not in fields:
            unknown.append(path)
        elif value is not None and not isinstance(value, fields[name]):
            expected = {str: "a string", list: "a list", dict: "an object"}[fields[name]]
            raise EncryptionConfigError(f"{path}: expected {expected}")


def _yaml_problem(err: yaml.YAMLError) -> str:
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or type(err).__name__
    return f"{problem} (line {mark.line + 1}, column {mark.column + 1})" if mark else str(problem)


# -- validation: ValidateEncryptionConfiguration ---------------------------------------------------

def _validate(document: dict[str, Any]) -> list[str]:
    rules = document.get("resources") or []
    if not rules:
        return ["resources: Required value: at least one resources is required"]
    problems: list[str] = []
    for i, rule in enumerate(rules):
        resources, providers = rule.get("resources") or [], rule.get("providers") or []
        at_resources, at_providers = f"resources[{i}].resources", f"resources[{i}].providers"
        if not resources:
            problems.append(f"{at_resources}: Required value: at least one {at_resources} is required")
        problems += _resource_overlap(resources, at_resources)
        problems += _resource_names(resources, at_resources)
        if not providers:
            problems.append(f"{at_providers}: Required value: at least one {at_providers} is required")
        for j, provider in enumerate(providers):
            problems += _provider(provider, f"{at_providers}[{j}]")
    return problems


def _resource_overlap(resources: list[str], at: str) -> list[str]:
    """``validateResourceOverlap``, pair by pair as Kubernetes goes (its first duplicate pair is
    only a duplicate; any later pair, equal or not, may also be an overlap)."""
    parsed = [parse_group_resource(name) for name in resources]
    duplicate = overlap = False
    for i, a in enumerate(parsed):
        for j, b in enumerate(parsed):
            if i == j:
                continue
            if a == b and not duplicate:
                duplicate = True
            elif a == ANY or (a[0] == b[0] and "*" in (a[1], b[1])):
                overlap = True
    shown = _go_list(resources)
    problems = []
    if duplicate:
        problems.append(f"{at}: Invalid value: {shown}: the same resource cannot be specified multiple times")
    if overlap:
        problems.append(f"{at}: Invalid value: {shown}: using overlapping resources such as 'secrets' and '*.' "
                        "in the same resource list is not allowed as they will be masked")
    return problems


def _resource_names(resources: list[str], at: str) -> list[str]:
    problems = []
    for j, name in enumerate(resources):
        group, resource = parse_group_resource(name)
        why = None
        if name != name.lower():
            why = "resource name should not contain capital letters"
        elif name == "*":
            why = "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"
        elif name in ("apiserveripinfo", "serviceipallocations", "servicenodeportallocations"):
            why = "resources which do not have REST API/s cannot be encrypted"
        elif group == "events.k8s.io":
            why = ("'*.events.k8s.io' objects are stored using the 'events' API group in etcd. "
                   "Use 'events' instead in the config file")
        elif group == "extensions":
            why = "'extensions' group has been removed and cannot be used for encryption"
        elif group == "*" and resource != "*":
            why = "encrypting the same resource across groups is not supported"
        if why:
            problems.append(f'{at}[{j}]: Invalid value: "{name}": {why}')
    return problems


def _provider(provider: dict[str, Any], at: str) -> list[str]:
    found = [name for name in PROVIDERS if provider.get(name) is not None]
    if not found:
        return [f"{at}: Invalid value: {_go_provider(provider)}: provider does not contain any of the expected "
                "providers: KMS, AESGCM, AESCBC, Secretbox, Identity"]
    if len(found) > 1:
        return [f"{at}: Invalid value: {_go_provider(provider)}: more than one provider specified in a single "
                "element, should split into different list elements"]
    name = found[0]
    if name == "kms":
        return [f"{at}.kms: Unsupported value: KMS providers are not supported by kplane: "
                "use aesgcm, aescbc, secretbox or identity"]
    if name == "identity":
        return []
    return _keys(provider[name].get("keys") or [], f"{at}.{name}.keys",
                 SECRETBOX_KEY_SIZES if name == "secretbox" else AES_KEY_SIZES)


def _keys(keys: list[dict[str, str]], at: str, sizes: tuple[int, ...]) -> list[str]:
    if not keys:
        return [f"{at}: Required value: at least one keys is required"]
    problems = []
    for k, key in enumerate(keys):
        here = f"{at}[{k}]"
        if not key.get("name"):
            problems.append(f"{here}.name: Required value: name is a mandatory field for a key")
        if not key.get("secret"):
            problems.append(f"{here}.secret: Required value: secret is a mandatory field for a key")
            continue
        secret = _secret(key["secret"])
        if secret is None:
            problems.append(f'{here}.secret: Invalid value: "REDACTED": secrets must be base64 encoded')
        elif len(secret) not in sizes:
            problems.append(f'{here}.secret: Invalid value: "REDACTED": secret is not of the expected length, '
                            f"got {len(secret)}, expected one of [{' '.join(map(str, sizes))}]")
    return problems


def _secret(text: str) -> bytes | None:
    """Standard base64 with padding, as Go's ``base64.StdEncoding``; None if it is not."""
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def _aggregate(problems: list[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message, or several in brackets."""
    return problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]"


def _go_list(items: list[str]) -> str:
    """A list of strings as Go's ``%#v`` prints it in a field error: ``[]string{"a", "b"}``."""
    return "[]string{" + ", ".join(json.dumps(item) for item in items) + "}"


def _go_provider(provider: dict[str, Any]) -> str:
    return "{" + ", ".join(sorted(provider)) + "}"


# -- building: one PrefixTransformers per resource --------------------------------------------------

def _build(document: dict[str, Any]) -> dict[GroupResource, Transformer]:
    """``getTransformerOverridesAndKMSPluginHealthzCheckers`` without KMS: a rule's providers
    append to those of each resource it names; a resource a wildcard rule above covers is masked."""
    chains: dict[GroupResource, list[Prefixed]] = {}
    for rule in document["resources"]:
        providers = [_prefixed(provider) for provider in rule["providers"]]
        for name in rule["resources"]:
            group_resource = parse_group_resource(name)
            for wildcard in ((group_resource[0], "*"), ANY):
                if wildcard in chains:
                    raise EncryptionConfigError(
                        f'resource "{_shown(group_resource)}" is masked by earlier rule "{_shown(wildcard)}"')
            chains.setdefault(group_resource, []).extend(providers)
    return {gr: PrefixTransformers(chain, "no matching prefix found") for gr, chain in chains.items()}


_MAKERS: dict[str, tuple[bytes, Callable[[bytes], Transformer]]] = {
    "aesgcm": (AESGCM_PREFIX, AESGCMTransformer),
    "aescbc": (AESCBC_PREFIX, AESCBCTransformer),
    "secretbox": (SECRETBOX_PREFIX, SecretboxTransformer),
}


def _prefixed(provider: dict[str, Any]) -> Prefixed:
    if provider.get("identity") is not None:
        return Prefixed(b"", Identity())
    name = next(name for name in _MAKERS if provider.get(name) is not None)
    prefix, make = _MAKERS[name]
    keys = [Prefixed(f"{key['name']}:".encode(), make(base64.b64decode(key["secret"]))) for key in provider[name]["keys"]]
    kind = "Secretbox" if name == "secretbox" else "AES"
    return Prefixed(prefix, PrefixTransformers(keys, f"no matching key was found for the provided {kind} transformer"))


def _shown(group_resource: GroupResource) -> str:
    """``grYAMLString``: ``*.`` for the core group's wildcard, else ``resource.group``."""
    group, resource = group_resource
    if not group:
        return "*." if resource == "*" else resource
    return f"{resource}.{group}"
