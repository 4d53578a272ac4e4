"""``kplane new-plugin --from-crd``: a typed plugin from sample-controller's and kopf's CRDs (and one
with every type the generator maps) installs and passes the tests it wrote, as ``kplane new-plugin``'s
own packages do (tests/test_scaffold.py), in a virtual environment of its own."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kplane.core import cli
from tests.isolated import Venv

CRDS = Path(__file__).resolve().parent / "fixtures" / "crds"


@pytest.mark.parametrize(("crd", "package", "tests"), [
    ("crd.yaml", "foos", 3),  # sample-controller's: no status subresource
    ("crd-status-subresource.yaml", "foos", 4),
    ("kopf-crd.yaml", "kopfexamples", 3),  # kopf's: preserve-unknown spec and status, printer columns
    ("gizmos-crd.yaml", "gizmos", 4),  # every type, two served versions, cluster-scoped
])
def test_the_generated_plugin_passes_its_own_tests(crd: str, package: str, tests: int, tmp_path: Path) -> None:
    venv = Venv.create(tmp_path / "venv")
    made = subprocess.run([str(venv.bin / "kplane"), "new-plugin", "--from-crd", str(CRDS / crd)], cwd=tmp_path,
                          capture_output=True, text=True, check=False)
    assert made.returncode == 0, made.stderr
    folder = tmp_path / package
    venv.pip("install", "-e", str(folder))
    try:
        done = subprocess.run([str(venv.bin / "pytest"), "-q", "-p", "no:cacheprovider"], cwd=folder,
                              capture_output=True, text=True, check=False, timeout=300)
        assert done.returncode == 0 and f"{tests} passed" in done.stdout, done.stdout + done.stderr
    finally:
        venv.pip("uninstall", "-y", f"kplane-{package}")


def generated(tmp_path: Path, crd: str, package: str) -> Path:
    assert cli.main(["new-plugin", "--from-crd", str(CRDS / crd), "--dir", str(tmp_path / package)]) == 0
    return tmp_path / package / package


def test_types_are_mapped_faithfully(tmp_path: Path) -> None:
    folder = generated(tmp_path, "gizmos-crd.yaml", "gizmos")
    schema, types = (folder / "v1.py").read_text(), (folder / "types.py").read_text()
    for line in ["size = fields.Int32(metadata={'description': 'How big.'})", "weight = fields.Int()", "ratio = fields.Float()",
                 "enabled = fields.Bool(metadata={'default': True})", "since = fields.Time()", "blob = fields.Bytes()",
                 "port = fields.IntOrString()", "tags = fields.List(fields.Str(), metadata={'list_type': 'set'})",
                 "parts = fields.List(fields.Nested(GizmoSpecPartsItemSchema), metadata={'list_type': 'map', 'list_map_keys': ['name']})",
                 "limits = fields.Dict(keys=fields.Str(), values=fields.Int())",
                 "owner = fields.Nested(GizmoSpecOwnerSchema, metadata={'pointer': True})",
                 "team_id = fields.Str(data_key='team_id')",  # not the camelCase of its Python name
                 "extra = fields.Dict(keys=fields.Str())", "anything = fields.Raw()"]:
        assert f"    {line}\n" in schema, line
    for line in ["port: int | str | None = None", "parts: list[GizmoSpecPartsItem] | None = None",
                 "limits: dict[str, int] | None = None", "owner: GizmoSpecOwner | None = None",
                 "extra: dict[str, Any] | None = None", "blob: bytes | None = None"]:
        assert f"    {line}\n" in types, line
    assert (folder / "v1beta1.py").read_text() == schema.replace("tools.example.com/v1:", "tools.example.com/v1beta1:")
    plugin = (folder / "plugin.py").read_text()
    assert "short_names=('gz',), categories=('all', 'tools')" in plugin and "namespaced=False" in plugin
    assert "scheme.set_version_priority(GROUP, ['v1', 'v1beta1'])" in plugin
    strategy = (folder / "strategy.py").read_text()
    assert "Check(('spec', 'ratio'), 'spec.ratio', 'exclusiveMinimum', 0)," in strategy
    assert "'spec.parts[*].name'" not in strategy  # rules inside lists are left to the author, not half-checked
    assert "Column('Since', 'date', lambda obj: age(dig(obj, 'spec.since')))," in strategy
    assert "Column('Mode', 'string', lambda obj: dig(obj, 'spec.mode'), priority=1)," in strategy


@pytest.mark.parametrize(("change", "message"), [
    (lambda text: text.replace("schema: *schema", "schema: {openAPIV3Schema: {type: object}}"),
     "served version(s) v1beta1 have a schema other than the storage version v1's"),
    (lambda text: text.replace("jsonPath: .spec.mode", "jsonPath: '.spec.parts[0].name'"),
     "printer column 'Mode': JSONPath '.spec.parts[0].name' is not a plain field path"),
    (lambda text: text.replace("kind: CustomResourceDefinition", "kind: ConfigMap"), "holds 0 CustomResourceDefinitions"),
    (lambda text: text.replace("storage: false", "storage: true"), "exactly one storage version"),
])
def test_what_it_cannot_write_is_refused(change: object, message: str, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    crd = tmp_path / "crd.yaml"
    crd.write_text(change((CRDS / "gizmos-crd.yaml").read_text()))  # type: ignore[operator]
    assert cli.main(["new-plugin", "--from-crd", str(crd), "--dir", str(tmp_path / "out")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_names_come_from_the_crd(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["new-plugin", "--from-crd", str(CRDS / "crd.yaml"), "--kind", "Bar", "--dir", str(tmp_path / "x")]) == 2
    assert "--from-crd takes the names and versions from the CRD; leave out --kind" in capsys.readouterr().err
    assert cli.main(["new-plugin"]) == 2
    assert "the following arguments are required: NAME, --group, --kind" in capsys.readouterr().err
