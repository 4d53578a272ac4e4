"""From nothing to a served, tested resource: how long `kplane new-plugin` takes to pay off.

Each round does what a plugin author does, as separate processes, in an empty folder:

1. ``kplane new-plugin benchgadgets --group benchgadgets.example.com --kind Gadget``
2. ``pip install -e benchgadgets`` (without build isolation, so nothing is downloaded)
3. ``pytest`` in the new package: its three tests, two against a kplane server of their own
4. ``kplane serve`` until ready, then ``kubectl get gadgets``

in a virtual environment of the round's own (``tests/isolated.py``: it sees kplane's packages,
and nobody sees what is installed there). Prints each step's median over the rounds, and the
total of steps 1-3 (a resource served and passing its tests) and of 1-4.

    python bench/new_plugin_bench.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import common  # noqa: F401  (puts the repository on sys.path)

from tests.isolated import Venv
from tests.servers import serving

NAME, GROUP, KIND = "benchgadgets", "benchgadgets.example.com", "Gadget"
STEPS = ["kplane new-plugin", "pip install -e", "pytest (3 tests)", "kplane serve + kubectl get"]


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done


def one_round(folder: Path) -> list[float]:
    venv = Venv.create(folder / "venv")
    times = []
    began = time.monotonic()
    run(str(venv.bin / "kplane"), "new-plugin", NAME, "--group", GROUP, "--kind", KIND, cwd=folder)
    times.append(time.monotonic() - began)
    began = time.monotonic()
    run(str(venv.bin / "pip"), "install", "-q", "--no-build-isolation", "--no-deps", "-e", NAME, cwd=folder)
    times.append(time.monotonic() - began)
    began = time.monotonic()
    tests = run(str(venv.bin / "pytest"), "-q", "-p", "no:cacheprovider", cwd=folder / NAME)
    assert "3 passed" in tests.stdout, tests.stdout
    times.append(time.monotonic() - began)
    began = time.monotonic()
    with serving(folder / "data", python=venv.python):
        env = {**os.environ, "KUBECONFIG": str(folder / "data" / "kubeconfig"), "HOME": str(folder)}
        listed = run("kubectl", "get", "gadgets", cwd=folder, env=env)
        assert "No resources found" in listed.stderr, listed.stderr
        times.append(time.monotonic() - began)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("kubectl") is None:
        print("kubectl is not on PATH: skipped")
        return
    rounds = []
    for i in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="new-plugin-bench-") as tmp:
            rounds.append(one_round(Path(tmp)))
        print(f"round {i + 1}: " + ", ".join(f"{name} {t:.2f}s" for name, t in zip(STEPS, rounds[-1], strict=True)))
    medians = [statistics.median(r[i] for r in rounds) for i in range(len(STEPS))]
    print(f"\nmedian of {args.rounds} rounds (cpus: {os.cpu_count()}):")
    for name, t in zip(STEPS, medians, strict=True):
        print(f"  {name:28} {t:6.2f}s")
    print(f"  {'served and tested (1-3)':28} {sum(medians[:3]):6.2f}s")
    print(f"  {'and kubectl get (1-4)':28} {sum(medians):6.2f}s")


if __name__ == "__main__":
    main()
