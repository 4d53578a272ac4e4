"""Driving the real kubectl from tests: a small runner and a manifest several modules share."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - containerPort: 80
"""


class Kubectl:
    def __init__(self, env: dict[str, str], workdir: Path) -> None:
        self.env = env
        self.workdir = workdir

    def run(self, *args: str, stdin: str | None = None, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(["kubectl", *args], input=stdin, capture_output=True, text=True, env=self.env, timeout=timeout)
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({done.returncode}): {done.stderr}")
        return done

    def apply_file(self, verb: str, manifest: str, *extra: str) -> str:
        path = self.workdir / f"manifest-{abs(hash(manifest))}.yaml"
        path.write_text(manifest)
        return self.run(verb, "-f", str(path), "--validate=false", *extra).stdout

    def json(self, *args: str) -> dict:
        return json.loads(self.run(*args, "-o", "json").stdout)


async def kubectl_async(env: dict[str, str], *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    """The real kubectl, run without blocking the event loop (a webhook in the test answers on it):
    its exit code, stdout and stderr."""
    process = await asyncio.create_subprocess_exec("kubectl", *args, env=env, stdin=asyncio.subprocess.PIPE,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(stdin.encode() if stdin else None), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()
