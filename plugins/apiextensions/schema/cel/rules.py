"""A schema's ``x-kubernetes-validations``, compiled into a tree that mirrors the schema's nodes
(``properties``, ``items``, ``additionalProperties``, ``allOf``), with the CRD's compile errors
worded and placed as ``pkg/apis/apiextensions/validation`` does."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from kplane.api import FieldError, FieldErrorType, forbidden, invalid, not_supported, required
from kplane.api import cel
from kplane.plugins.apiextensions.schema.cel.compile import CompileError, Compiled, compile_rule, signature

REASONS = ("FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired")
_NEWLINES = re.compile(r"[\n\r]+")


@dataclasses.dataclass(slots=True)
class Rule:
    source: dict[str, Any]  # the x-kubernetes-validations entry
    compiled: Compiled | None  # None: the rule does not compile (see compile_error)
    message_expression: Compiled | None
    field_path: str  # normalized fieldPath (kube's field.Path form), "" for none
    optional_old_self: bool
    #: why a stored rule no longer compiles (one taken before kplane checked what it now does):
    #: every value it applies to is refused, as kube refuses them, never let through unchecked
    compile_error: str = ""

    def message(self) -> str:
        """``ruleMessageOrDefault``: the message, else ``failed rule: <rule>``."""
        text = (self.source.get("message") or "").strip()
        return text or f"failed rule: {(self.source.get('rule') or '').strip()}"

    def error_name(self) -> str:
        """``ruleErrorString``: how evaluation errors name the rule."""
        return (self.source.get("message") or "").strip() or (self.source.get("rule") or "").strip()


@dataclasses.dataclass(slots=True)
class RuleNode:
    """One schema node with rules at or below it (nodes without any are left out)."""

    schema: dict[str, Any]
    rules: list[Rule]
    properties: dict[str, RuleNode]
    items: RuleNode | None
    additional: RuleNode | None
    all_of: list[RuleNode]
    has_number: bool  # some value below is a JSON number held as a CEL double
    list_map_keys: tuple[str, ...]  # the item keys old items are found by (listType=map)


def _has_number(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    if schema.get("type") == "number":
        return True
    children = [*(schema.get("properties") or {}).values(), schema.get("items"), schema.get("additionalProperties")]
    return any(_has_number(c) for c in children)


def normalize_field_path(path: str, schema: dict[str, Any]) -> str | None:
    """``ValidFieldPath``: ``.a.b['c']`` checked against ``schema``, as a field.Path string
    (None when it names no field)."""
    out = ""
    node = schema
    for dotted, quoted in re.findall(r"\.([^.\[\]']+)|\['((?:[^'\\]|\\.)*)'\]", path):
        name = dotted or re.sub(r"\\(.)", r"\1", quoted)
        props = node.get("properties") or {}
        extra = node.get("additionalProperties")
        if name in props:
            out += f".{name}"
            node = props[name]
        elif quoted and not props and isinstance(extra, dict):
            out += f"[{name}]"
            node = extra
        else:
            return None
    if re.sub(r"\.([^.\[\]']+)|\['((?:[^'\\]|\\.)*)'\]", "", path):
        return None
    return out.lstrip(".")


def _checks(i: int, entry: Any, schema: dict[str, Any], path: str) -> list[FieldError]:
    """Kube's checks of one entry before compiling it."""
    at = f"{path}.x-kubernetes-validations[{i}]"
    errs: list[FieldError] = []
    rule, message = str(entry.get("rule") or ""), str(entry.get("message") or "")
    if not rule.strip():
        errs.append(required(f"{at}.rule", "rule is not specified"))
    elif message and not message.strip():
        errs.append(invalid(f"{at}.message", message, "message must be non-empty if specified"))
    elif _NEWLINES.search(message.strip()):
        errs.append(invalid(f"{at}.message", message, "message must not contain line breaks"))
    elif _NEWLINES.search(rule.strip()) and not message.strip():
        errs.append(required(f"{at}.message", "message must be specified if rule contains line breaks"))
    expression = entry.get("messageExpression")
    if expression is not None and expression != "" and not str(expression).strip():
        errs.append(required(f"{at}.messageExpression", "messageExpression must be non-empty if specified"))
    reason = entry.get("reason")
    if reason is not None and reason not in REASONS:
        errs.append(not_supported(f"{at}.reason", reason, list(REASONS)))
    field_path = entry.get("fieldPath")
    if field_path:
        if not str(field_path).strip():
            errs.append(invalid(f"{at}.fieldPath", field_path, "fieldPath must be non-empty if specified"))
        elif _NEWLINES.search(field_path):
            errs.append(invalid(f"{at}.fieldPath", field_path, "fieldPath must not contain line breaks"))
        elif normalize_field_path(field_path, schema) is None:
            errs.append(invalid(f"{at}.fieldPath", field_path, "fieldPath must be a valid path"))
    return errs


@dataclasses.dataclass(slots=True)
class Build:
    """What compiling a schema gave: the tree, the CRD's errors, the costs seen."""

    errors: list[FieldError] = dataclasses.field(default_factory=list)
    costs: list[tuple[int, str]] = dataclasses.field(default_factory=list)  # (cost, path of the expression)


def build(schema: dict[str, Any] | None, path: str, out: Build, cardinality: int = 1,
          uncorrelatable: str | None = None) -> RuleNode | None:
    """The rule tree of ``schema`` at ``path`` (None when no rule is at or below it)."""
    if not isinstance(schema, dict):
        return None
    rules: list[Rule] = []
    entries = schema.get("x-kubernetes-validations") or []
    sig = signature(schema)
    estimator = cel.cost.Estimator(schema)
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, dict):
            continue
        errs = _checks(i, entry, schema, path)
        out.errors += errs
        if errs:
            continue
        at = f"{path}.x-kubernetes-validations[{i}]"
        optional_old = bool(entry.get("optionalOldSelf"))
        try:
            compiled = compile_rule(entry["rule"], sig, optional_old, "BOOL", "rule")
        except CompileError as err:
            out.errors.append(invalid(f"{at}.rule", entry, err.detail))
            rules.append(Rule(entry, None, None, "", optional_old, compile_error=err.detail))
            continue
        rule_cost = estimator.cost(compiled.tree) * cardinality
        if rule_cost > cel.cost.PER_EXPRESSION_LIMIT:
            out.errors.append(forbidden(f"{at}.rule", cel.cost.exceeds("estimated rule cost", rule_cost, cel.cost.PER_EXPRESSION_LIMIT)))
        out.costs.append((rule_cost, f"{at}.rule"))
        message_expression = None
        if entry.get("messageExpression"):
            try:
                message_expression = compile_rule(entry["messageExpression"], sig, False, "STRING", "messageExpression")
            except CompileError as err:
                out.errors.append(invalid(f"{at}.messageExpression", entry, err.detail))
            else:
                message_cost = estimator.cost(message_expression.tree) * cardinality
                if message_cost > cel.cost.PER_EXPRESSION_LIMIT:
                    out.errors.append(forbidden(f"{at}.messageExpression", cel.cost.exceeds(
                        "estimated messageExpression cost", message_cost, cel.cost.PER_EXPRESSION_LIMIT)))
                out.costs.append((message_cost, f"{at}.messageExpression"))
        if compiled.uses_old_self and uncorrelatable is not None:
            out.errors.append(invalid(f"{at}.rule", entry["rule"],
                                      f"oldSelf cannot be used on the uncorrelatable portion of the schema within {uncorrelatable}"))
        elif not compiled.uses_old_self and entry.get("optionalOldSelf") is not None:
            out.errors.append(invalid(f"{at}.optionalOldSelf", entry["optionalOldSelf"],
                                      "may not be set if oldSelf is not used in rule"))
        field_path = normalize_field_path(entry["fieldPath"], schema) if entry.get("fieldPath") else ""
        rules.append(Rule(entry, compiled, message_expression, field_path or "", optional_old))
    properties = {}
    for name, child in (schema.get("properties") or {}).items():
        node = build(child, f"{path}.properties[{name}]", out, cardinality, uncorrelatable)
        if node is not None:
            properties[name] = node
    items = None
    if isinstance(schema.get("items"), dict):
        items_path = f"{path}.items"
        keyed = schema.get("x-kubernetes-list-type") == "map"
        items = build(schema["items"], items_path, out, cardinality * cel.cost.max_size(schema),
                      uncorrelatable if keyed or uncorrelatable else items_path)
    additional = None
    if isinstance(schema.get("additionalProperties"), dict):
        additional = build(schema["additionalProperties"], f"{path}.additionalProperties", out,
                           cardinality * cel.cost.max_size(schema), uncorrelatable)
    all_of = [n for j, s in enumerate(schema.get("allOf") or [])
              if (n := build(s, f"{path}.allOf[{j}]", out, cardinality, uncorrelatable)) is not None]
    if not (rules or properties or items or additional or all_of):
        return None
    return RuleNode(schema, rules, properties, items, additional, all_of, _has_number(schema),
                    tuple(schema.get("x-kubernetes-list-map-keys") or ()))


def total_cost_errors(out: Build, path: str) -> list[FieldError]:
    """The per-CRD budget: the costliest expressions and the schema, when the total is over it."""
    total = sum(c for c, _ in out.costs)
    if total <= cel.cost.PER_CRD_LIMIT:
        return []
    detail = "contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema"
    worst = sorted(out.costs, reverse=True)[:4]
    return [*(FieldError(FieldErrorType.FORBIDDEN, p, detail) for _, p in worst),
            forbidden(path, cel.cost.exceeds("x-kubernetes-validations estimated rule & messageExpression cost total "
                                         "for entire OpenAPIv3 schema", total, cel.cost.PER_CRD_LIMIT))]
