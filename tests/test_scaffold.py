"""``kplane new-plugin``: the package it writes installs, passes its own tests, and is served.

The end-to-end test does what a user does (generate, ``pip install -e``, ``pytest`` in the new
package, ``kplane serve``, kubectl) and prints how long each step took; uninstalls afterwards. It
installs into a virtual environment of its own (``tests/isolated.py``), invisible to others.
``bench/new_plugin_bench.py`` measures the same path several times.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from kplane.core import cli
from kplane.core.scaffold import NewPlugin, pluralize, render
from tests.isolated import Venv
from tests.kubectl_cli import Kubectl
from tests.servers import serving

FILES = ["README.md", "gadgets/__init__.py", "gadgets/plugin.py", "gadgets/strategy.py", "gadgets/types.py",
         "gadgets/v1alpha1.py", "pyproject.toml", "tests/test_gadgets.py"]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
def test_a_new_plugin_passes_its_own_tests_and_is_served(tmp_path: Path) -> None:
    venv = Venv.create(tmp_path / "venv")
    began = time.monotonic()
    made = subprocess.run([str(venv.bin / "kplane"), "new-plugin", "gadgets", "--group", "gadgets.example.com",
                           "--kind", "Gadget"], cwd=tmp_path, capture_output=True, text=True, check=False)
    generated = time.monotonic()
    assert made.returncode == 0, made.stderr
    assert made.stdout.startswith("created gadgets/ (kplane-gadgets, the plugin of gadgets.example.com, Gadget in v1alpha1):\n")
    folder = tmp_path / "gadgets"
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) == FILES

    venv.pip("install", "-e", str(folder))
    try:
        installed = time.monotonic()
        tests = subprocess.run([str(venv.bin / "pytest"), "-q", "-p", "no:cacheprovider"], cwd=folder,
                               capture_output=True, text=True, check=False)
        tested = time.monotonic()
        assert tests.returncode == 0 and "3 passed" in tests.stdout, tests.stdout + tests.stderr

        with serving(tmp_path / "data", python=venv.python) as served:
            env = {**os.environ, "KUBECONFIG": str(served.kubeconfig), "HOME": str(tmp_path)}
            kubectl = Kubectl(env, tmp_path)
            assert kubectl.run("get", "gadgets").stderr == "No resources found in default namespace.\n"
            listed = time.monotonic()
            manifest = "apiVersion: gadgets.example.com/v1alpha1\nkind: Gadget\nmetadata: {name: one}\nspec: {size: 3}\n"
            assert kubectl.apply_file("apply", manifest) == "gadget.gadgets.example.com/one created\n"
            header, row = kubectl.run("get", "gadgets").stdout.splitlines()
            assert header.split() == ["NAME", "SIZE", "AGE"] and row.split()[:2] == ["one", "3"]
            assert "An example field, 0 or more." in kubectl.run("explain", "gadget.spec").stdout
            refused = kubectl.run("apply", "-f", "-", stdin=manifest.replace("size: 3", "size: -1"), check=False)
            assert refused.returncode == 1
            assert "spec.size: Invalid value: -1: must be greater than or equal to 0" in refused.stderr
            assert "gadgets  (gadgets.plugin, kplane-gadgets 0.1.0)" in venv.run("-m", "kplane.core.cli", "plugins").stdout
    finally:
        venv.pip("uninstall", "-y", "kplane-gadgets")
    print(f"\nkplane new-plugin {generated - began:.2f}s, pip install -e {installed - generated:.2f}s, "
          f"its tests passed {tested - installed:.2f}s: {tested - began:.2f}s from nothing to a tested resource; "
          f"kplane serve + kubectl get {listed - tested:.2f}s more ({listed - began:.2f}s in all)")


def new_plugin(*args: str) -> int:
    try:
        return cli.main(["new-plugin", *args])
    except SystemExit as exit_:  # argparse's own errors
        return int(exit_.code or 0)


@pytest.mark.parametrize(("args", "message"), [
    (["Gadgets", "--group", "gadgets.example.com", "--kind", "Gadget"],
     "NAME 'Gadgets' must be a Python package name: lower-case letters, digits and _, starting with a letter (such as 'gadgets')"),
    (["my-gadgets", "--group", "gadgets.example.com", "--kind", "Gadget"], "(such as 'my_gadgets')"),
    (["class", "--group", "gadgets.example.com", "--kind", "Gadget"], "NAME 'class' must be a Python package name"),
    (["json", "--group", "gadgets.example.com", "--kind", "Gadget"], "NAME 'json' would hide kplane's or Python's own 'json' module"),
    (["core", "--group", "gadgets.example.com", "--kind", "Gadget"], "NAME 'core' would hide"),
    (["gadgets", "--group", "gadgets", "--kind", "Gadget"], "--group 'gadgets' must be a DNS subdomain with at least one dot"),
    (["gadgets", "--group", "Gadgets.Example.com", "--kind", "Gadget"], "--group 'Gadgets.Example.com': a lowercase RFC 1123 subdomain"),
    (["gadgets", "--group", "gadgets.example.com", "--kind", "gadget"], "--kind 'gadget' must be UpperCamelCase"),
    (["gadgets", "--group", "gadgets.example.com", "--kind", "Gad_get"], "--kind 'Gad_get' must be UpperCamelCase"),
    (["gadgets", "--group", "gadgets.example.com", "--kind", "Gadget", "--version", "1.0"], "--version '1.0' must be a Kubernetes API version"),
    (["gadgets", "--group", "gadgets.example.com", "--kind", "Gadget", "--plural", "Gadgets"], "--plural 'Gadgets': a lowercase RFC 1123 label"),
])
def test_arguments_are_checked(args: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert new_plugin(*args) == 2
    err = capsys.readouterr().err
    assert err.startswith("kplane new-plugin: ") and message in err
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_every_problem_is_reported_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert new_plugin("Bad", "--group", "bad", "--kind", "bad") == 2
    assert len(capsys.readouterr().err.splitlines()) == 3


def test_missing_options_are_argparse_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert new_plugin("gadgets") == 2
    assert "the following arguments are required: --group, --kind" in capsys.readouterr().err


def test_an_existing_folder_is_never_overwritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gadgets").mkdir()
    (tmp_path / "gadgets" / "mine.txt").write_text("keep me")
    assert new_plugin("gadgets", "--group", "gadgets.example.com", "--kind", "Gadget") == 2
    assert "gadgets already exists; choose another NAME or --dir (nothing is overwritten)" in capsys.readouterr().err
    assert [p.name for p in (tmp_path / "gadgets").iterdir()] == ["mine.txt"]
    (tmp_path / "file").write_text("")
    assert new_plugin("gadgets", "--group", "gadgets.example.com", "--kind", "Gadget", "--dir", "file") == 2
    (tmp_path / "empty").mkdir()  # an empty folder is fine: `mkdir x && cd x && kplane new-plugin ... --dir .`
    assert new_plugin("gadgets", "--group", "gadgets.example.com", "--kind", "Gadget", "--dir", "empty") == 0
    assert (tmp_path / "empty" / "gadgets" / "plugin.py").exists()


def test_options(tmp_path: Path) -> None:
    plugin = NewPlugin("shop_plugin", "shop.example.org", "Box", version="v2beta1", namespaced=False, folder=tmp_path / "x")
    files = render(plugin)
    assert set(files) == {"pyproject.toml", "README.md", "shop_plugin/__init__.py", "shop_plugin/plugin.py",
                          "shop_plugin/types.py", "shop_plugin/v2beta1.py", "shop_plugin/strategy.py",
                          "tests/test_shop_plugin.py"}
    assert 'name = "kplane-shop-plugin"' in files["pyproject.toml"]
    assert 'shop_plugin = "shop_plugin.plugin"' in files["pyproject.toml"]
    assert 'plural="boxes"' in files["shop_plugin/plugin.py"] and "namespaced=False" in files["shop_plugin/plugin.py"]
    assert "the cluster-scoped kind `Box`" in files["README.md"] and "export KUBECONFIG=$PWD/" in files["README.md"]
    for path, text in files.items():
        if path.endswith(".py"):
            compile(text, path, "exec")
    assert NewPlugin("kplane_shop", "a.b", "Box").distribution == "kplane-shop"


@pytest.mark.parametrize(("kind", "plural"), [
    ("Widget", "widgets"), ("Box", "boxes"), ("Policy", "policies"), ("Gateway", "gateways"), ("Mesh", "meshes"),
    ("Status", "statuses"), ("DNSRecord", "dnsrecords"),
])
def test_plurals(kind: str, plural: str) -> None:
    assert pluralize(kind) == plural
