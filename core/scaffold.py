"""``kplane new-plugin NAME --group G --kind K``: a new API-group plugin, ready to install.

Writes a pip-installable package (the layout of ``docs/writing-a-plugin.md``, part 1)::

    NAME/
      pyproject.toml        the kplane.plugins entry point
      README.md
      NAME/plugin.py        the hooks: the kind and its strategy
      NAME/types.py         the internal type
      NAME/VERSION.py       the wire format of the one served version
      NAME/strategy.py      a validation rule and the kubectl get columns
      tests/test_NAME.py    tests with the `kplane` pytest fixture

which passes its own tests as soon as it is installed (``pip install -e NAME``, ``pytest NAME``).
The templates are below, as plain text with ``$name`` placeholders (:class:`string.Template`).
"""

from __future__ import annotations

import argparse
import keyword
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from string import Template

from kplane.core import scaffold_crd
from kplane.core.meta.validation import is_dns1123_label, is_dns1123_subdomain
from kplane.core.scaffold_crd import CRDError, FromCRD

PACKAGE_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
KIND_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*$")
VERSION_NAME = re.compile(r"^v[1-9][0-9]*(?:(?:alpha|beta)[1-9][0-9]*)?$")
# Packages a plugin must not be called: they would hide kplane's own, or the standard library's.
RESERVED = {"core", "plugins", "tests", "kplane"}


class ScaffoldError(ValueError):
    """The arguments cannot make a plugin; the message says each problem, one per line."""


@dataclass(frozen=True, slots=True)
class NewPlugin:
    """What to generate; :meth:`check` says whether it can be."""

    name: str  # the Python package, and the plugin's name for kplane
    group: str
    kind: str
    version: str = "v1alpha1"
    plural: str = ""  # default: the kind in lower case, made plural
    namespaced: bool = True
    folder: Path | None = None  # default: ./NAME

    @property
    def target(self) -> Path:
        return self.folder if self.folder is not None else Path(self.name)

    @property
    def resource(self) -> str:
        return self.plural or pluralize(self.kind)

    @property
    def distribution(self) -> str:
        dashed = self.name.replace("_", "-")
        return dashed if dashed.startswith("kplane-") else f"kplane-{dashed}"

    def check(self) -> None:
        """Raise :class:`ScaffoldError` listing every problem with the arguments."""
        problems = []
        if not PACKAGE_NAME.match(self.name) or keyword.iskeyword(self.name):
            suggestion = re.sub(r"[^a-z0-9]+", "_", self.name.lower()).strip("_")
            hint = f" (such as {suggestion!r})" if PACKAGE_NAME.match(suggestion) and suggestion != self.name else ""
            problems.append(f"NAME {self.name!r} must be a Python package name: lower-case letters, digits and _, "
                            f"starting with a letter{hint}")
        elif self.name in RESERVED or self.name in sys.stdlib_module_names:
            problems.append(f"NAME {self.name!r} would hide kplane's or Python's own {self.name!r} module; choose another")
        if "." not in self.group:
            problems.append(f"--group {self.group!r} must be a DNS subdomain with at least one dot, such as "
                            f"{self.group or 'widgets'}.example.com (groups without a dot are Kubernetes' own)")
        else:
            problems += [f"--group {self.group!r}: {why}" for why in is_dns1123_subdomain(self.group)]
        if not KIND_NAME.match(self.kind) or len(self.kind) > 63:
            problems.append(f"--kind {self.kind!r} must be UpperCamelCase letters and digits, such as Widget")
        if not VERSION_NAME.match(self.version):
            problems.append(f"--version {self.version!r} must be a Kubernetes API version: v1, v2beta1, v1alpha1, ...")
        problems += [f"--plural {self.resource!r}: {why}" for why in is_dns1123_label(self.resource)]
        target = self.target
        if target.exists() and not (target.is_dir() and not any(target.iterdir())):
            problems.append(f"{target} already exists; choose another NAME or --dir (nothing is overwritten)")
        if problems:
            raise ScaffoldError("\n".join(problems))


def pluralize(kind: str) -> str:
    """``Widget`` -> ``widgets``, ``Box`` -> ``boxes``, ``Policy`` -> ``policies``."""
    word = kind.lower()
    if re.search(r"(s|x|z|ch|sh)$", word):
        return word + "es"
    if re.search(r"[^aeiou]y$", word):
        return word[:-1] + "ies"
    return word + "s"


def render(plugin: NewPlugin, model: FromCRD | None = None) -> dict[str, str]:
    """Every file of the package, by path relative to its folder; with ``model``, the types,
    versions, strategy, hooks and tests are the CRD's (:mod:`kplane.core.scaffold_crd`)."""
    values = {
        "name": plugin.name,
        "distribution": plugin.distribution,
        "group": plugin.group,
        "kind": plugin.kind,
        "version": plugin.version,
        "plural": plugin.resource,
        "singular": plugin.kind.lower(),
        "namespaced": "" if plugin.namespaced else ", namespaced=False",
        "scope": "namespaced" if plugin.namespaced else "cluster-scoped",
    }
    package = plugin.name
    templates = {
        "pyproject.toml": PYPROJECT,
        "README.md": README,
        f"{package}/__init__.py": INIT,
        f"{package}/plugin.py": PLUGIN,
        f"{package}/types.py": TYPES,
        f"{package}/{plugin.version}.py": SCHEMA,
        f"{package}/strategy.py": STRATEGY,
        f"tests/test_{package}.py": TEST,
    }
    files = {path: Template(text).substitute(values) for path, text in templates.items()}
    if model is not None:
        del files[f"{package}/{plugin.version}.py"]
        files.update({
            f"{package}/types.py": scaffold_crd.types_module(model),
            **{f"{package}/{v.name}.py": scaffold_crd.schema_module(model, v) for v in model.versions},
            f"{package}/strategy.py": scaffold_crd.strategy_module(model, package),
            f"{package}/plugin.py": scaffold_crd.plugin_module(model, package),
            f"tests/test_{package}.py": scaffold_crd.tests_module(model, package),
        })
    return files


def generate(plugin: NewPlugin, model: FromCRD | None = None) -> list[Path]:
    """Check the arguments, then write the package; returns the files written."""
    plugin.check()
    written = []
    for path, text in render(plugin, model).items():
        target = plugin.target / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        written.append(target)
    return written


# -- the command ------------------------------------------------------------------------------

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", metavar="NAME", nargs="?", default=None,
                        help="the Python package (and plugin) name, e.g. widgets (with --from-crd: the CRD's plural)")
    parser.add_argument("--group", help="the API group, a DNS subdomain such as widgets.example.com (required without --from-crd)")
    parser.add_argument("--kind", help="the kind, UpperCamelCase, such as Widget (required without --from-crd)")
    parser.add_argument("--from-crd", type=Path, default=None, metavar="CRD.yaml",
                        help="write a typed plugin from this CustomResourceDefinition: its names, scope, versions, "
                             "schema, status subresource and printer columns")
    parser.add_argument("--version", default="v1alpha1", help="the one version served at first (default v1alpha1)")
    parser.add_argument("--plural", default="", help="the resource name (default: the kind, lower case, plural)")
    parser.add_argument("--cluster-scoped", action="store_true", help="objects belong to no namespace")
    parser.add_argument("--dir", type=Path, default=None, metavar="PATH", help="where to write it (default ./NAME)")


def from_crd(args: argparse.Namespace) -> tuple[NewPlugin, FromCRD]:
    """What ``--from-crd`` writes: the CRD's names (NAME, --dir still choose the package and folder)."""
    given = [flag for flag, value in (("--group", args.group), ("--kind", args.kind), ("--plural", args.plural),
                                      ("--cluster-scoped", args.cluster_scoped)) if value]
    if given or args.version != "v1alpha1":
        raise ScaffoldError(f"--from-crd takes the names and versions from the CRD; leave out {', '.join(given) or '--version'}")
    try:
        model = FromCRD.load(args.from_crd)
    except CRDError as err:
        raise ScaffoldError(str(err)) from None
    spec = model.spec
    plugin = NewPlugin(args.name or model.default_name(), spec["group"], model.kind, model.storage.name,
                       spec["names"]["plural"], spec.get("scope", "Namespaced") == "Namespaced", args.dir)
    return plugin, model


def run(args: argparse.Namespace) -> int:
    """``kplane new-plugin``: 0 once written, 2 (nothing written) when the arguments are wrong."""
    missing = [] if args.from_crd else [flag for flag, value in (("NAME", args.name), ("--group", args.group),
                                                                 ("--kind", args.kind)) if not value]
    if missing:
        print(f"kplane new-plugin: error: the following arguments are required: {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        if args.from_crd:
            plugin, model = from_crd(args)
            written = generate(plugin, model)
        else:
            plugin = NewPlugin(args.name, args.group, args.kind, args.version, args.plural, not args.cluster_scoped, args.dir)
            written = generate(plugin)
    except ScaffoldError as err:
        for problem in str(err).splitlines():
            print(f"kplane new-plugin: {problem}", file=sys.stderr)
        return 2
    folder = plugin.target
    print(f"created {folder}/ ({plugin.distribution}, the plugin of {plugin.group}, {plugin.kind} in {plugin.version}):")
    for path in written:
        print(f"  {path.relative_to(folder)}")
    print("next:")
    print(f"  pip install -e {folder}")
    print(f"  pytest {folder}")
    print(f"  kplane serve    # then: kubectl get {plugin.resource}")
    return 0


# -- the templates ----------------------------------------------------------------------------

PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "$distribution"
version = "0.1.0"
description = "$group for kplane: the $kind kind."
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["kplane"]

# What makes this a kplane plugin: kplane loads this module at start-up.
[project.entry-points."kplane.plugins"]
$name = "$name.plugin"

[tool.setuptools]
packages = ["$name"]

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

README = """\
# $distribution

A kplane plugin serving the API group `$group`: the $scope kind `$kind`
(resource `$plural`), in version `$version`.

```sh
pip install -e .       # next to kplane; kplane finds the plugin through its entry point
pytest                 # each test gets a kplane server of its own (the `kplane` fixture)
kplane serve           # then, in another terminal:
export KUBECONFIG=$$PWD/.kplane/kubeconfig
kubectl get $plural
kubectl explain $singular.spec
```

| file | what it is |
|---|---|
| `$name/plugin.py` | the hooks kplane calls at start-up: the kind, its versions, its strategy |
| `$name/types.py` | the internal `$kind`, which the strategy works on |
| `$name/$version.py` | the wire format of `$group/$version` |
| `$name/strategy.py` | validation and the columns of `kubectl get` |
| `tests/test_$name.py` | tests against a real server |

Next steps (a second version with a conversion, defaulting, a status subresource, admission, a
controller) are in kplane's `docs/writing-a-plugin.md`; every hook is described in
`core/hookspecs.py`, and everything a plugin may import from kplane is in `kplane.api`.
"""

INIT = '''\
"""$group for kplane (the hooks are in plugin.py)."""
'''

PLUGIN = '''\
"""The kplane plugin: each function is a hook kplane calls once at start-up, in this order."""

from kplane.api import Registry, Scheme, hookimpl

from $name import $version
from $name.strategy import ${kind}Strategy
from $name.types import GROUP, $kind


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    scheme.add_kind(group=GROUP, kind="$kind", plural="$plural", internal=$kind,
                    versions={"$version": $version.${kind}Schema},
                    storage_version="$version"$namespaced, plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["$version"])


@hookimpl
def kplane_register_strategies(registry: Registry) -> None:
    registry.add_strategy(GROUP, "$plural", ${kind}Strategy())
'''

TYPES = '''\
"""The internal $kind: what the strategy works on. Every served version converts to it."""

from dataclasses import dataclass, field

from kplane.api import ObjectMeta

GROUP = "$group"


@dataclass(slots=True)
class ${kind}Spec:
    size: int | None = None  # an example field: replace it with your own


@dataclass(slots=True)
class $kind:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: ${kind}Spec = field(default_factory=${kind}Spec)
'''

SCHEMA = '''\
"""$group/$version: the wire format of $kind (camelCase on the wire, Python names here)."""

from kplane.api import ObjectMetaSchema, Schema, fields


class ${kind}SpecSchema(Schema):
    size = fields.Int(metadata={"description": "An example field, 0 or more."})


class ${kind}Schema(Schema):
    """A $kind."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": "Standard object metadata."})
    spec = fields.Nested(${kind}SpecSchema, metadata={"description": "What the $kind should be."})
'''

STRATEGY = '''\
"""How the server treats ${kind}s: validation and the columns of `kubectl get`."""

from kplane.api import AGE, NAME, Column, FieldError, RequestContext, Strategy, dig, invalid

from $name.types import $kind


def validate(obj: $kind) -> list[FieldError]:
    """Rules on the internal type: a failure is a 422 with one cause per field."""
    errors = []
    if obj.spec.size is not None and obj.spec.size < 0:
        errors.append(invalid("spec.size", obj.spec.size, "must be greater than or equal to 0"))
    return errors


# Each cell reads the object as stored ($version, wire names); priority=1 columns show with -o wide.
COLUMNS = (
    NAME,
    Column("Size", "integer", lambda obj: dig(obj, "spec.size"), description="The example field."),
    AGE,
)


class ${kind}Strategy(Strategy):
    columns = COLUMNS

    def validate(self, ctx: RequestContext, obj: $kind) -> list[FieldError]:
        return validate(obj)

    def validate_update(self, ctx: RequestContext, obj: $kind, old: $kind) -> list[FieldError]:
        return validate(obj)
'''

TEST = '''\
"""The $kind plugin against a real kplane server: the `kplane` fixture starts one per test."""

import pytest
from kplane.testing import KplaneError

from $name.strategy import COLUMNS

API_VERSION = "$group/$version"


def new_object(name, **spec):
    return {"apiVersion": API_VERSION, "kind": "$kind", "metadata": {"name": name}, "spec": spec}


def test_create_and_read(kplane):
    kplane.apply(new_object("example", size=3))
    assert kplane.get(API_VERSION, "$kind", "example")["spec"] == {"size": 3}


def test_validation(kplane):
    with pytest.raises(KplaneError) as refused:
        kplane.apply(new_object("negative", size=-1))
    assert refused.value.code == 422
    assert [cause["field"] for cause in refused.value.status["details"]["causes"]] == ["spec.size"]


def test_columns():
    stored = {"metadata": {"name": "example"}, "spec": {"size": 3}}
    assert [column.name for column in COLUMNS] == ["Name", "Size", "Age"]
    assert COLUMNS[1].cell(stored) == 3
'''
