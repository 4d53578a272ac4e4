"""``kplane new-plugin --from-crd crd.yaml``: a typed plugin from an existing CustomResourceDefinition.

A team moves a CRD into Python when it needs real strategies. From the CRD this writes what
``kplane new-plugin`` writes (:mod:`kplane.core.scaffold`), filled in from the CRD:

* ``types.py``: internal dataclasses from the storage version's ``openAPIV3Schema`` (nested
  objects are nested dataclasses, ``additionalProperties`` maps are ``dict[str, T]``, objects that
  keep unknown fields are ``dict[str, Any]``, ``x-kubernetes-int-or-string`` is ``int | str``);
* one schema module per served version (``Int32`` for ``format: int32``, ``Time`` for
  ``date-time``, ``Bytes`` for ``byte``, descriptions, defaults and list types in the metadata);
* ``strategy.py``: what apiextensions-apiserver does for the CRD (status subresource, generation),
  the schema's ``enum``, bounds, lengths, ``pattern`` and ``required`` as checks with Kubernetes'
  messages, and the ``additionalPrinterColumns``;
* the plugin's hooks with the CRD's names (plural, singular, shortNames, categories, scope), a
  README and tests that pass once it is installed.

What the schema cannot say in Python is refused, not guessed: a printer column whose JSONPath is
not a plain field path, or a served version whose schema differs from the storage version's (it
would need a conversion to write by hand).
"""

from __future__ import annotations

import copy
import keyword
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kplane.core.runtime.schema import camel_case


class CRDError(ValueError):
    """The file holds no usable CRD; the message says why."""


def read_crd(path: Path) -> dict[str, Any]:
    """The one CustomResourceDefinition in a YAML or JSON file."""
    try:
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    except (OSError, yaml.YAMLError) as err:
        raise CRDError(f"--from-crd {path}: {err}") from None
    crds = [d for d in docs if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"
            and str(d.get("apiVersion", "")).startswith("apiextensions.k8s.io/")]
    if len(crds) != 1:
        raise CRDError(f"--from-crd {path}: holds {len(crds)} CustomResourceDefinitions; give a file with exactly one")
    crd = crds[0]
    spec = crd.get("spec") or {}
    versions = [v for v in spec.get("versions") or [] if v.get("served")]
    if not spec.get("group") or not (spec.get("names") or {}).get("kind") or not versions:
        raise CRDError(f"--from-crd {path}: the CRD needs spec.group, spec.names.kind and a served version")
    if sum(1 for v in spec["versions"] if v.get("storage")) != 1:
        raise CRDError(f"--from-crd {path}: the CRD needs exactly one storage version")
    return crd


def attribute(key: str) -> str:
    """The Python name of a wire key: snake_case when it maps back (``deploymentName`` ->
    ``deployment_name``), else a safe name the field maps with ``data_key``."""
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()
    snake = re.sub(r"[^a-z0-9_]", "_", snake)
    if not snake or snake[0].isdigit():
        snake = "f_" + snake
    if keyword.iskeyword(snake) or snake in {"metadata_", "self"}:
        snake += "_"
    return snake


def upper_camel(key: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", key) if part)


# -- the model ------------------------------------------------------------------------------------

@dataclass
class Prop:
    """One property of an object schema, as Python sees it."""

    attr: str  # in Python
    hint: str  # its type hint in the internal dataclass
    field: str  # its marshmallow field, as source


@dataclass
class Struct:
    """An object schema with properties: a dataclass and a marshmallow schema."""

    name: str
    description: str
    props: list[Prop] = field(default_factory=list)


@dataclass(frozen=True)
class Check:
    """A schema rule the strategy checks: on the value at ``attrs`` (reached through objects only)."""

    attrs: tuple[str, ...]
    path: str  # the wire path, as Kubernetes reports it
    rule: str  # minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern, enum,
    #            minItems, maxItems, required
    bound: Any


RULES = ("minimum", "maximum", "minLength", "maxLength", "pattern", "enum", "minItems", "maxItems")


class Walker:
    """Turns one version's structural schema into structs (and, for the storage version, checks)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.structs: list[Struct] = []
        self.checks: list[Check] = []

    def root(self, schema: dict[str, Any]) -> Struct:
        props = {k: v for k, v in (schema.get("properties") or {}).items() if k not in ("apiVersion", "kind", "metadata")}
        return self.struct(self.kind, {**schema, "properties": props}, (), "", typed_meta=True)

    def struct(self, name: str, schema: dict[str, Any], attrs: tuple[str, ...], path: str,
               typed_meta: bool = False, reachable: bool = True) -> Struct:
        made = Struct(name, " ".join(str(schema.get("description", "")).split()))
        self.structs.append(made)
        required = set(schema.get("required") or [])
        taken: set[str] = {"metadata"} if typed_meta else set()
        for key, sub in (schema.get("properties") or {}).items():
            attr = attribute(key)
            while attr in taken:
                attr += "_"
            taken.add(attr)
            where = f"{path}.{key}" if path else key
            hint, source = self.type_of(name + upper_camel(key), sub, attrs + (attr,), where, reachable)
            data_key = "" if camel_case(attr) == key else f"data_key={key!r}, "
            made.props.append(Prop(attr, hint, self.with_meta(source, sub, data_key)))
            if key in required and reachable:
                self.checks.append(Check(attrs + (attr,), where, "required", None))
        return made

    def type_of(self, name: str, schema: dict[str, Any], attrs: tuple[str, ...], path: str,
                reachable: bool) -> tuple[str, str]:
        """(type hint, marshmallow field source) of a schema; ``reachable``: a check can find the
        value by attributes from the root (not inside a list or map)."""
        kind = schema.get("type")
        if reachable:
            for rule in RULES:
                if rule in schema:
                    exclusive = f"exclusive{rule.capitalize()}"
                    named = exclusive if rule in ("minimum", "maximum") and schema.get(exclusive) else rule
                    self.checks.append(Check(attrs, path, named, schema[rule]))
        if schema.get("x-kubernetes-int-or-string"):
            return "int | str", "fields.IntOrString"
        if schema.get("x-kubernetes-embedded-resource") or (kind == "object" and schema.get("x-kubernetes-preserve-unknown-fields")
                                                           and not schema.get("properties")):
            return "dict[str, Any]", "fields.Dict(keys=fields.Str()"
        if kind == "object" and schema.get("properties"):
            self.struct(name, schema, attrs, path, reachable=reachable)
            return name, f"fields.Nested({name}Schema"
        if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
            hint, source = self.type_of(name + "Value", schema["additionalProperties"], attrs, f"{path}[*]", reachable=False)
            return f"dict[str, {hint}]", f"fields.Dict(keys=fields.Str(), values={self.close(source)}"
        if kind == "object":
            return "dict[str, Any]", "fields.Dict(keys=fields.Str()"
        if kind == "array":
            hint, source = self.type_of(name + "Item", schema.get("items") or {}, attrs, f"{path}[*]", reachable=False)
            return f"list[{hint}]", f"fields.List({self.close(source)}"
        if kind == "integer":
            return "int", "fields.Int32" if schema.get("format") == "int32" else "fields.Int"
        if kind == "number":
            return "float", "fields.Float"
        if kind == "boolean":
            return "bool", "fields.Bool"
        if kind == "string":
            return {"date-time": ("str", "fields.Time"), "byte": ("bytes", "fields.Bytes")}.get(
                schema.get("format", ""), ("str", "fields.Str"))
        return "Any", "fields.Raw"  # no type: anything (x-kubernetes-preserve-unknown-fields)

    @staticmethod
    def close(source: str) -> str:
        """A field's source as an argument: ``fields.Int`` -> ``fields.Int()``, ``fields.List(x`` -> ``fields.List(x)``."""
        return source + ")" if "(" in source else source + "()"

    @staticmethod
    def with_meta(source: str, schema: dict[str, Any], data_key: str) -> str:
        """The field's source with its ``data_key`` and metadata (description, default, list type)."""
        meta: dict[str, Any] = {}
        if schema.get("description"):
            meta["description"] = " ".join(str(schema["description"]).split())
        if source.startswith("fields.Nested("):
            meta["pointer"] = True  # a custom resource writes nothing it was not given
        if "default" in schema:
            meta["default"] = schema["default"]
        for key, name in (("x-kubernetes-list-type", "list_type"), ("x-kubernetes-list-map-keys", "list_map_keys")):
            if key in schema:
                meta[name] = schema[key]
        args = f"{data_key}metadata={meta!r}" if meta else data_key.rstrip(", ")
        if "(" in source:
            return f"{source}, {args})" if args else f"{source})"
        return f"{source}({args})"


@dataclass
class Version:
    name: str
    structs: list[Struct]
    schema: dict[str, Any]


@dataclass
class FromCRD:
    """What ``--from-crd`` read: the CRD's names and, per served version, its structs."""

    crd: dict[str, Any]
    versions: list[Version]
    storage: Version
    checks: list[Check]

    @classmethod
    def load(cls, path: Path) -> FromCRD:
        crd = read_crd(path)
        spec = crd["spec"]
        kind = spec["names"]["kind"]
        versions, checks = [], []
        for v in spec["versions"]:
            if not v.get("served"):
                continue
            schema = ((v.get("schema") or {}).get("openAPIV3Schema")) or {"type": "object"}
            walker = Walker(kind)
            walker.root(schema)
            versions.append(Version(v["name"], walker.structs, schema))
            if v.get("storage"):
                checks = walker.checks
        storage = next(v for v in versions if any(s.get("storage") and s["name"] == v.name for s in spec["versions"]))
        differing = [v.name for v in versions if v.schema != storage.schema]
        if differing:
            raise CRDError(f"--from-crd {path}: served version(s) {', '.join(differing)} have a schema other than the storage "
                           f"version {storage.name}'s; a plugin converts between such versions in Python, which this cannot "
                           "write for you: generate from a CRD whose served versions share one schema, then add the others")
        for column in cls.columns_of(crd, storage.name):
            if not re.fullmatch(r"(\.[A-Za-z0-9_-]+)+", column["jsonPath"]):
                raise CRDError(f"--from-crd {path}: printer column {column['name']!r}: JSONPath {column['jsonPath']!r} is not a "
                               "plain field path (.a.b); write that column by hand")
        return cls(crd, versions, storage, checks)

    @staticmethod
    def columns_of(crd: dict[str, Any], version: str) -> list[dict[str, Any]]:
        [v] = [v for v in crd["spec"]["versions"] if v["name"] == version]
        return list(v.get("additionalPrinterColumns") or [])

    @property
    def spec(self) -> dict[str, Any]:
        return self.crd["spec"]

    @property
    def kind(self) -> str:
        return str(self.spec["names"]["kind"])

    @property
    def status_subresource(self) -> bool:
        [v] = [v for v in self.spec["versions"] if v["name"] == self.storage.name]
        return "status" in (v.get("subresources") or {})

    def columns(self) -> list[dict[str, Any]]:
        return self.columns_of(self.crd, self.storage.name)

    def default_name(self) -> str:
        """The package name when none is given: the plural, made a Python name."""
        return re.sub(r"[^a-z0-9]+", "_", str(self.spec["names"]["plural"]).lower()).strip("_")


# -- rendering ------------------------------------------------------------------------------------

def version_key(name: str) -> tuple[int, int, int]:
    """Kubernetes' version priority as a sort key: GA before beta before alpha, higher first."""
    found = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", name)
    if not found:
        return (3, 0, 0)
    major, stage, minor = found.groups()
    return ({None: 0, "beta": 1, "alpha": 2}[stage], -int(major), -int(minor or 0))


def types_module(model: FromCRD) -> str:
    structs = list(reversed(model.storage.structs))  # children first
    uses_any = any("Any" in p.hint for s in structs for p in s.props)
    lines = [f'"""The internal {model.kind}, from the storage version {model.storage.name} of the CRD '
             f'{model.crd["metadata"]["name"]}: what the', 'strategy works on. Every served version converts to it."""', "",
             "from __future__ import annotations", "", "from dataclasses import dataclass, field"]
    if uses_any:
        lines.append("from typing import Any")
    lines += ["", "from kplane.api import ObjectMeta", "", f"GROUP = {model.spec['group']!r}"]
    for s in structs:
        lines += ["", "", "@dataclass(slots=True)", f"class {s.name}:"]
        if s.description:
            lines.append(f"    {docstring(s.description)}")
        if s.name == model.kind:
            lines.append("    metadata: ObjectMeta = field(default_factory=ObjectMeta)")
        lines += [f"    {p.attr}: {p.hint} | None = None" for p in s.props]
        if s.name != model.kind and not s.props:
            lines.append("    pass")
    return "\n".join(lines) + "\n"


def docstring(text: str) -> str:
    return '"""' + text.replace("\\", "\\\\").replace('"""', "'''") + '"""'


def schema_module(model: FromCRD, version: Version) -> str:
    lines = [f'"""{model.spec["group"]}/{version.name}: the wire format of {model.kind}, the openAPIV3Schema of the CRD',
             f'{model.crd["metadata"]["name"]} (Python names here, the wire\'s camelCase keys there)."""', "",
             "from kplane.api import ObjectMetaSchema, Schema, fields"]
    for s in reversed(version.structs):
        lines += ["", "", f"class {s.name}Schema(Schema):"]
        if s.description:
            lines += [f"    {docstring(s.description)}", ""]
        if s.name == model.kind:
            lines.append('    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": "Standard object metadata."})')
        lines += [f"    {p.attr} = {p.field}" for p in s.props]
        if s.name != model.kind and not s.props:
            lines.append("    pass")
    return "\n".join(lines) + "\n"


def column_source(column: dict[str, Any]) -> str:
    path = column["jsonPath"].lstrip(".")
    cell = f"lambda obj: age(dig(obj, {path!r}))" if column.get("type") == "date" else f"lambda obj: dig(obj, {path!r})"
    extra = "".join(f", {arg}={column[key]!r}" for key, arg in (("description", "description"), ("priority", "priority"),
                                                                 ("format", "format")) if column.get(key))
    return f"    Column({column['name']!r}, {column.get('type', 'string')!r}, {cell}{extra}),"


def strategy_module(model: FromCRD, package: str) -> str:
    kind, status = model.kind, model.status_subresource
    ignored = ("metadata", "status") if status else ("metadata",)
    columns = model.columns()
    names = ["Column", "FieldError", "NAME", "RequestContext", "Strategy", "dig", "invalid", "not_supported", "required"]
    if status:
        names.append("ObjectMeta")
    if not columns:
        names.append("AGE")
    if any(c.get("type") == "date" for c in columns):
        names.append("age")
    checks = "".join(f"\n    Check({c.attrs!r}, {c.path!r}, {c.rule!r}, {c.bound!r})," for c in model.checks)
    checks = f"({checks}\n)" if checks else "()"
    what = "with a status subresource" if status else "without a status subresource"
    out = f'''"""How the server treats {kind}s: as apiextensions-apiserver treats the custom resources of the CRD
{model.crd["metadata"]["name"]} ({what}).

* Create sets generation 1{"; it drops the status, which only /status writes" if status else ""}. An update bumps the
  generation when anything but {" and ".join(ignored)} changed{"; it keeps the stored status" if status else ""}.
* Updates must name the resourceVersion they read, as for every custom resource.
* The schema's rules (CHECKS) are checked with Kubernetes' messages; rules inside lists and maps
  are left to you (validate() is the place).
* COLUMNS are the CRD's additionalPrinterColumns.
"""

import copy
import dataclasses
import re
from typing import Any, NamedTuple

from kplane.api import {", ".join(sorted(names))}

from {package}.types import {kind}

IGNORED_BY_GENERATION = {ignored!r}


class Check(NamedTuple):
    attrs: tuple[str, ...]  # the attributes leading to the value, from the object
    path: str  # the field, as reported
    rule: str
    bound: Any


CHECKS: tuple[Check, ...] = {checks}


def broken(check: Check, value: Any) -> FieldError | None:
    """The error of ``value`` against one rule of the schema, worded as Kubernetes words it."""
    path, rule, bound = check.path, check.rule, check.bound
    if rule == "enum":
        return None if value in bound else not_supported(path, value, bound)
    failed = {{
        "minimum": (lambda: value < bound, "greater than or equal to"),
        "exclusiveMinimum": (lambda: value <= bound, "greater than"),
        "maximum": (lambda: value > bound, "less than or equal to"),
        "exclusiveMaximum": (lambda: value >= bound, "less than"),
    }}.get(rule)
    if failed is not None:
        return invalid(path, value, f"{{path}} in body should be {{failed[1]}} {{bound}}") if failed[0]() else None
    if rule == "minLength" and len(value) < bound:
        return invalid(path, value, f"{{path}} in body should be at least {{bound}} chars long")
    if rule == "maxLength" and len(value) > bound:
        return invalid(path, value, f"{{path}} in body should be at most {{bound}} chars long")
    if rule == "pattern" and not re.search(bound, value):
        return invalid(path, value, f"{{path}} in body should match '{{bound}}'")
    if rule == "minItems" and len(value) < bound:
        return invalid(path, value, f"{{path}} in body should have at least {{bound}} items")
    if rule == "maxItems" and len(value) > bound:
        return invalid(path, value, f"{{path}} in body should have at most {{bound}} items")
    return None


def validate(obj: {kind}) -> list[FieldError]:
    """The schema's rules on the internal object: a failure is a 422 with one cause per field."""
    errors = []
    for check in CHECKS:
        parent: Any = obj
        for attr in check.attrs[:-1]:
            parent = getattr(parent, attr, None) if parent is not None else None
        if parent is None:
            continue  # the object holding the field is absent: nothing to check
        value = getattr(parent, check.attrs[-1], None)
        if check.rule == "required":
            if value is None:
                errors.append(required(check.path))
        elif value is not None and (error := broken(check, value)) is not None:
            errors.append(error)
    return errors


def generation_changed(obj: {kind}, old: {kind}) -> bool:
    return any(getattr(obj, f.name) != getattr(old, f.name) for f in dataclasses.fields(obj)
               if f.name not in IGNORED_BY_GENERATION)


# Each cell reads the object as stored (wire names); priority=1 columns show with -o wide.
COLUMNS = (
    NAME,
{chr(10).join(column_source(c) for c in columns) if columns else "    AGE,"}
)


class {kind}Strategy(Strategy):
    allow_unconditional_update = False
    columns = COLUMNS
    reset_fields = {("status",) if status else ()!r}  # what a write here never changes: no field manager owns it

    def prepare_for_create(self, ctx: RequestContext, obj: {kind}) -> None:
{"        obj.status = None" + chr(10) if status else ""}        obj.metadata.generation = 1

    def prepare_for_update(self, ctx: RequestContext, obj: {kind}, old: {kind}) -> None:
{"        obj.status = old.status" + chr(10) if status else ""}        if generation_changed(obj, old):
            obj.metadata.generation = (old.metadata.generation or 0) + 1

    def validate(self, ctx: RequestContext, obj: {kind}) -> list[FieldError]:
        return validate(obj)

    def validate_update(self, ctx: RequestContext, obj: {kind}, old: {kind}) -> list[FieldError]:
        return validate(obj)
'''
    if status:
        out += f'''

class {kind}StatusStrategy(Strategy):
    """``/status``: the status changes, nothing else (metadata as stored but managedFields)."""

    allow_unconditional_update = False
    columns = COLUMNS
    reset_fields = {tuple(k for k in model.storage.schema.get("properties") or {} if k not in ("apiVersion", "kind", "metadata", "status"))!r}

    def prepare_for_update(self, ctx: RequestContext, obj: {kind}, old: {kind}) -> None:
        for f in dataclasses.fields(obj):
            if f.name not in ("metadata", "status"):
                setattr(obj, f.name, copy.deepcopy(getattr(old, f.name)))
        for f in dataclasses.fields(ObjectMeta):
            if f.name != "managed_fields":
                setattr(obj.metadata, f.name, copy.deepcopy(getattr(old.metadata, f.name)))

    def validate_update(self, ctx: RequestContext, obj: {kind}, old: {kind}) -> list[FieldError]:
        return validate(obj)
'''
    else:
        out = out.replace("import copy\n", "")
    return out


def plugin_module(model: FromCRD, package: str) -> str:
    spec, kind = model.spec, model.kind
    names = spec["names"]
    versions = sorted((v.name for v in model.versions), key=version_key)
    imports = ", ".join(sorted(versions))
    schemas = ", ".join(f"{v!r}: {v}.{kind}Schema" for v in versions)
    strategies = f"{kind}Strategy, {kind}StatusStrategy" if model.status_subresource else f"{kind}Strategy"
    extra = "".join(f", {arg}={tuple(names[key])!r}" for key, arg in (("shortNames", "short_names"), ("categories", "categories"))
                    if names.get(key))
    out = f'''"""The kplane plugin of {spec["group"]}, from the CRD {model.crd["metadata"]["name"]}: each function is a hook kplane
calls once at start-up. Names and scope are the CRD's."""

from kplane.api import Registry, Scheme, hookimpl

from {package} import {imports}
from {package}.strategy import {strategies}
from {package}.types import GROUP, {kind}


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    scheme.add_kind(group=GROUP, kind={kind!r}, plural={names["plural"]!r}, singular={names.get("singular") or kind.lower()!r}{extra},
                    internal={kind}, versions={{{schemas}}}, storage_version={model.storage.name!r},
                    namespaced={spec.get("scope", "Namespaced") == "Namespaced"}, plugin=plugin_name)
    scheme.set_version_priority(GROUP, {versions!r})


@hookimpl
def kplane_register_strategies(registry: Registry) -> None:
    registry.add_strategy(GROUP, {names["plural"]!r}, {kind}Strategy())
'''
    if model.status_subresource:
        out += f'    registry.add_strategy(GROUP, {names["plural"]!r}, {kind}StatusStrategy(), subresource="status")\n'
    return out


def example(schema: dict[str, Any]) -> Any:
    """A value the schema accepts (None: leave the field out)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind in ("integer", "number") or schema.get("x-kubernetes-int-or-string"):
        step = 1 if kind != "number" else 0.5
        value: Any = 1 if kind != "number" else 1.5
        if "minimum" in schema and value < schema["minimum"] + (step if schema.get("exclusiveMinimum") else 0):
            value = schema["minimum"] + (step if schema.get("exclusiveMinimum") else 0)
        if "maximum" in schema and value > schema["maximum"] - (step if schema.get("exclusiveMaximum") else 0):
            value = schema["maximum"] - (step if schema.get("exclusiveMaximum") else 0)
        return value
    if kind == "boolean":
        return True
    if kind == "string":
        if "pattern" in schema:
            return None
        fixed = {"date-time": "2024-01-01T00:00:00Z", "byte": "ZXhhbXBsZQ=="}.get(schema.get("format", ""))
        text = fixed or "example".ljust(schema.get("minLength", 0), "x")
        return text if fixed else text[:schema.get("maxLength", len(text))]
    if kind == "array":
        item = example(schema.get("items") or {})
        return [item] * schema["minItems"] if item is not None and schema.get("minItems") else None  # [] is never written
    if kind == "object" and schema.get("properties"):
        made = {k: example(v) for k, v in schema["properties"].items()}
        return {k: v for k, v in made.items() if v is not None}
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        value = example(schema["additionalProperties"])
        return {} if value is None else {"key": value}
    if kind == "object" and schema.get("x-kubernetes-embedded-resource"):
        return None
    if kind == "object":
        return {"example": "value"}
    return "example"  # untyped: anything


def set_at(obj: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for key in parents:
        obj = obj.setdefault(key, {})
    if value is None:
        obj.pop(last, None)
    else:
        obj[last] = value


def violation(check: Check) -> tuple[bool, Any]:
    """(found, a value that breaks the rule; None: leave the field out)."""
    rule, bound = check.rule, check.bound
    if rule == "required":
        return True, None
    if rule in ("minimum", "exclusiveMinimum"):
        return True, bound - 1 if isinstance(bound, int) else bound - 0.5
    if rule in ("maximum", "exclusiveMaximum"):
        return True, bound + 1 if isinstance(bound, int) else bound + 0.5
    if rule == "enum" and all(isinstance(b, str) for b in bound):
        return True, "not-" + "-".join(bound)
    if rule == "minLength" and bound > 0:
        return True, ""
    if rule == "maxLength":
        return True, "x" * (bound + 1)
    return False, None


def tests_module(model: FromCRD, package: str) -> str:
    kind, plural = model.kind, model.spec["names"]["plural"]
    props = model.storage.schema.get("properties") or {}
    body = {k: v for k, v in (example(model.storage.schema) or {}).items()
            if k not in ("apiVersion", "kind", "metadata") and not (k == "status" and model.status_subresource)}
    api_version = f"{model.spec['group']}/{model.storage.name}"
    names = [c["name"] for c in model.columns()] or ["Age"]
    out = f'''"""The {kind} plugin against a real kplane server: the `kplane` fixture starts one per test."""

import copy

import pytest
from kplane.testing import KplaneError

from {package}.strategy import COLUMNS

API_VERSION = {api_version!r}
EXAMPLE = {body!r}  # a body the CRD's schema accepts


def new_object(name, body):
    return {{"apiVersion": API_VERSION, "kind": {kind!r}, "metadata": {{"name": name}}, **copy.deepcopy(body)}}


def test_create_and_read(kplane):
    kplane.apply(new_object("example", EXAMPLE))
    stored = kplane.get(API_VERSION, {kind!r}, "example"{"" if model.spec.get("scope", "Namespaced") == "Namespaced" else ", namespace=''"})
    assert {{key: stored.get(key) for key in EXAMPLE}} == EXAMPLE
    assert stored["metadata"]["generation"] == 1


def test_columns():
    assert [column.name for column in COLUMNS] == {["Name", *names]!r}
'''
    spec_checks = [c for c in model.checks if not (c.path.startswith("status") and model.status_subresource)]
    for check in spec_checks:
        found, value = violation(check)
        if not found:
            continue
        broken = copy.deepcopy(body)
        set_at(broken, check.path, value)
        out += f'''

def test_validation(kplane):
    broken = {broken!r}  # {check.path}: against its {check.rule}
    with pytest.raises(KplaneError) as refused:
        kplane.apply(new_object("broken", broken))
    assert refused.value.code == 422
    assert [cause["field"] for cause in refused.value.status["details"]["causes"]] == [{check.path!r}]
'''
        break
    if model.status_subresource and "status" in props:
        status = example(props["status"]) or {}
        out += f'''

def test_status_is_a_subresource(kplane):
    created = kplane.request("POST", kplane.path(API_VERSION, {kind!r}), {{**new_object("split", EXAMPLE), "status": {status!r}}})
    assert "status" not in created
    written = kplane.request("PUT", kplane.path(API_VERSION, {kind!r}, "split") + "/status", {{**created, "status": {status!r}}})
    assert written["status"] == {status!r} and written["metadata"]["generation"] == 1
'''
    return out

