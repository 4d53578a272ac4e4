"""``status.typeChecking`` of ValidatingAdmissionPolicies (kube's ``validatingadmissionpolicy-status``
controller): the fields an expression reads of ``object``/``oldObject`` that the matched kinds'
schemas do not have, one warning per expression and kind, with the policy's ``observedGeneration``.

The kinds are those the policy's ``matchConstraints.resourceRules`` name exactly (no ``*``), their
schemas the server's own OpenAPI v3. A field is checked along ``object.a.b`` selections (kube
type-checks the whole expression; here only its field paths): under a schema that allows any
field (``additionalProperties``, ``x-kubernetes-preserve-unknown-fields``) nothing is checked.
"""

from __future__ import annotations

from typing import Any

from kplane.api import ApiError, Handlers, RESTClient, SharedInformerFactory, WorkQueue, Workers, wait_synced
from kplane.plugins.admissionregistration.expressions import CompileError, compile_expression, reads
from kplane.plugins.admissionregistration.policy.validating import declarations
from kplane.plugins.admissionregistration.types import GROUP

Obj = dict[str, Any]


def expression_fields(spec: Obj) -> list[tuple[str, str, str]]:
    """``(fieldRef, expression, result type)`` of every expression of a policy's spec."""
    out = []
    for i, v in enumerate(spec.get("validations") or ()):
        out.append((f"spec.validations[{i}].expression", v.get("expression") or "", "BOOL"))
        if v.get("messageExpression"):
            out.append((f"spec.validations[{i}].messageExpression", v["messageExpression"], "STRING"))
    for i, a in enumerate(spec.get("auditAnnotations") or ()):
        out.append((f"spec.auditAnnotations[{i}].valueExpression", a.get("valueExpression") or "", "DYN"))
    for i, c in enumerate(spec.get("matchConditions") or ()):
        out.append((f"spec.matchConditions[{i}].expression", c.get("expression") or "", "BOOL"))
    for i, v in enumerate(spec.get("variables") or ()):
        out.append((f"spec.variables[{i}].expression", v.get("expression") or "", "DYN"))
    return out


def _resolve(schema: Obj | None, components: Obj) -> Obj | None:
    """A schema with its ``$ref`` (or a one-``$ref`` ``allOf``) followed."""
    seen = 0
    while isinstance(schema, dict) and seen < 32:
        ref = schema.get("$ref") or next((s.get("$ref") for s in schema.get("allOf") or () if isinstance(s, dict)), None)
        if not ref:
            return schema
        schema = components.get(ref.rpartition("/")[2])
        seen += 1
    return schema if isinstance(schema, dict) else None


def missing_field(schema: Obj, path: tuple[str, ...], components: Obj) -> str | None:
    """The first name along ``path`` that ``schema`` has no field for, None when all are there
    (or the schema cannot tell)."""
    current: Obj | None = _resolve(schema, components)
    for name in path:
        if current is None or current.get("x-kubernetes-preserve-unknown-fields") or "additionalProperties" in current:
            return None
        properties = current.get("properties")
        if not isinstance(properties, dict):
            return None  # not an object schema (a select on it is cel's error, not a missing field)
        if name not in properties:
            return name
        current = _resolve(properties[name], components)
    return None


class TypeChecking:
    """Writes each policy's ``status.typeChecking`` and ``observedGeneration`` once per generation."""

    def __init__(self, client: RESTClient, informers: SharedInformerFactory) -> None:
        self.client = client
        self.policies = informers.informer(GROUP, "v1", "validatingadmissionpolicies")
        self.informers = informers
        self.queue: WorkQueue[str] = WorkQueue()

    async def run(self) -> None:
        self.policies.add_handlers(Handlers.for_any(lambda p: self.queue.add(p["metadata"]["name"])))
        self.informers.start()
        async with Workers(self.queue) as workers:
            await wait_synced(self.policies)
            workers.start(1, self.sync, name="validatingadmissionpolicy-status")
            await workers.wait()

    async def _kinds(self, spec: Obj) -> list[tuple[str, Obj, Obj]]:
        """``(group/version, Kind=kind text, its schema, the document's components)`` of the kinds
        the rules name exactly."""
        out = []
        for rule in ((spec.get("matchConstraints") or {}).get("resourceRules") or ()):
            for group in rule.get("apiGroups") or ():
                for version in rule.get("apiVersions") or ():
                    for resource in rule.get("resources") or ():
                        if "*" in (group, version) or "*" in resource or "/" in resource:
                            continue
                        found = await self._schema(group, version, resource)
                        if found is not None:
                            out.append(found)
        return out

    async def _schema(self, group: str, version: str, resource: str) -> tuple[str, Obj, Obj] | None:
        base = f"/apis/{group}/{version}" if group else f"/api/{version}"
        try:
            listing = await self.client.request("GET", base)
            kind = next((r["kind"] for r in listing.get("resources") or () if r.get("name") == resource), None)
            if kind is None:
                return None
            document = await self.client.request("GET", f"/openapi/v3{base}")
        except ApiError:
            return None
        components = (document.get("components") or {}).get("schemas") or {}
        for schema in components.values():
            for gvk in schema.get("x-kubernetes-group-version-kind") or ():
                if (gvk.get("group"), gvk.get("version"), gvk.get("kind")) == (group, version, kind):
                    gv = f"{group}/{version}" if group else version
                    return f"{gv}, Kind={kind}", schema, components
        return None

    async def warnings(self, spec: Obj) -> list[Obj]:
        kinds = await self._kinds(spec)
        decl = declarations(spec)
        out = []
        for field_ref, source, want in expression_fields(spec):
            try:
                program = compile_expression(source, decl, want)
            except CompileError:
                continue  # validation refuses these
            read = reads(program)
            problems = []
            for kind, schema, components in kinds:
                for variable in ("object", "oldObject"):
                    for path in read.get(variable) or ():
                        name = missing_field(schema, path, components)
                        if name is not None:
                            problems.append(f"{kind}: undefined field '{name}' in {variable}.{'.'.join(path)}")
            if problems:
                out.append({"fieldRef": field_ref, "warning": "\n".join(dict.fromkeys(problems))})
        return out

    async def sync(self, name: str) -> None:
        policy = self.policies.indexer.get(name)
        if policy is None:
            return
        generation = policy["metadata"].get("generation")
        status = policy.get("status") or {}
        if status.get("observedGeneration") == generation and "typeChecking" in status:
            return
        checked = {**status, "observedGeneration": generation,
                   "typeChecking": {"expressionWarnings": await self.warnings(policy.get("spec") or {})}}
        try:
            await self.client.resource(GROUP, "v1", "validatingadmissionpolicies").update_status({**policy, "status": checked})
        except ApiError as err:
            if err.code not in (404, 409):
                raise
            if err.code == 409:
                self.queue.add(name)  # changed meanwhile: the informer brings the new one
