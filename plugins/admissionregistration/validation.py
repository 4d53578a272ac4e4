"""Validation of the admissionregistration kinds (``pkg/apis/admissionregistration/validation``),
on internal objects, with kube's paths and messages. CEL expressions are compiled here, through
:func:`.expressions.compile_expression`, with the variables each use declares.

An update is held to what its old object already met (kube's ``validationOptions``): a
configuration whose old webhooks had duplicate names or side effects may keep them, and match
conditions left as they were are not compiled again."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from kplane.api import (
    FieldError, LabelSelector, duplicate, forbidden, internal, invalid, is_dns1035_label, is_dns1123_subdomain,
    is_path_segment_name, is_qualified_name, not_supported, required, too_many, validate_label_selector,
    validate_review_versions, validate_webhook_service, validate_webhook_url,
)
from kplane.plugins.admissionregistration.expressions import CompileError, Declarations, compile_expression
from kplane.plugins.admissionregistration.policy.mutating_patchers import compile_mutation
from kplane.plugins.admissionregistration.types import (
    APPLY_CONFIGURATION, FAILURE_POLICIES, MATCH_POLICIES, OPERATIONS, PARAMETER_NOT_FOUND_ACTIONS,
    PATCH_TYPES, REINVOCATION_POLICIES, SCOPES, SIDE_EFFECTS, VALIDATION_ACTIONS, MatchCondition, MatchResources,
    MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding, ParamKind, ParamRef, RuleWithOperations,
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding, ValidatingAdmissionPolicyStatus, Variable, Webhook,
    WebhookConfiguration,
)

ADMISSION_REVIEW_VERSIONS = ["v1", "v1beta1"]  # what kube-apiserver (and so kplane) can send
ALL_SIDE_EFFECTS = ["None", "NoneOnDryRun", "Some", "Unknown"]
VALIDATION_REASONS = ["Forbidden", "Invalid", "RequestEntityTooLarge"]
MAX_MATCH_CONDITIONS = 64
MAX_AUDIT_ANNOTATIONS = 20
MAX_AUDIT_VALUE_EXPRESSION = 5 * 1024
_CEL_IDENTIFIER = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*")
_CEL_RESERVED = frozenset({"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function",
                           "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while"})


@dataclasses.dataclass(frozen=True, slots=True)
class _Options:
    """kube's ``validationOptions``: the checks an update is spared when its old object failed them."""

    ignore_match_conditions: bool = False
    require_no_side_effects: bool = True
    require_recognized_review_version: bool = True
    require_unique_names: bool = True


# -- the pieces -------------------------------------------------------------------------------

def _has_wildcard(values: Iterable[str]) -> bool:
    return "*" in values


def _fully_qualified(path: str, name: str) -> list[FieldError]:
    """``IsFullyQualifiedName``: a DNS subdomain of at least three labels."""
    if not name:
        return [required(path)]
    if problems := is_dns1123_subdomain(name):
        return [invalid(path, name, ",".join(problems))]
    if len(name.split(".")) < 3:
        return [invalid(path, name, "should be a domain with at least three segments separated by dots")]
    return []


def _resources(resources: list[str], path: str) -> list[FieldError]:
    """``validateResources``: ``x``, ``x/y``, ``x/*``, ``*/y``, ``*`` and ``*/*``, without overlaps."""
    errs = [] if resources else [required(path)]
    wildcard_sub: set[str] = set()  # x/*
    wildcard_res: set[str] = set()  # */x
    double = single = plain = False
    for i, entry in enumerate(resources):
        if not entry:
            errs.append(required(f"{path}[{i}]"))
            continue
        double |= entry == "*/*"
        single |= entry == "*"
        if "/" not in entry:
            plain = entry != "*"
            continue
        res, _, sub = entry.partition("/")
        if res in wildcard_sub:
            errs.append(invalid(f"{path}[{i}]", entry, f"if '{res}/*' is present, must not specify {entry}"))
        if sub in wildcard_res:
            errs.append(invalid(f"{path}[{i}]", entry, f"if '*/{sub}' is present, must not specify {entry}"))
        if sub == "*":
            wildcard_sub.add(res)
        if res == "*":
            wildcard_res.add(sub)
    if len(resources) > 1 and double:
        errs.append(invalid(path, resources, "if '*/*' is present, must not specify other resources"))
    if single and plain:
        errs.append(invalid(path, resources, "if '*' is present, must not specify other resources without subresources"))
    return errs


def _rule(rule: RuleWithOperations, path: str) -> list[FieldError]:
    """``validateRuleWithOperations`` (and ``validateNamedRuleWithOperations``'s resourceNames)."""
    errs: list[FieldError] = []
    operations, groups, versions = rule.operations or [], rule.api_groups or [], rule.api_versions or []
    if not operations:
        errs.append(required(f"{path}.operations"))
    if len(operations) > 1 and _has_wildcard(operations):
        errs.append(invalid(f"{path}.operations", operations, "if '*' is present, must not specify other operations"))
    errs += [not_supported(f"{path}.operations[{i}]", op, OPERATIONS) for i, op in enumerate(operations) if op not in OPERATIONS]
    if not groups:
        errs.append(required(f"{path}.apiGroups"))
    if len(groups) > 1 and _has_wildcard(groups):
        errs.append(invalid(f"{path}.apiGroups", groups, "if '*' is present, must not specify other API groups"))
    if not versions:
        errs.append(required(f"{path}.apiVersions"))
    if len(versions) > 1 and _has_wildcard(versions):
        errs.append(invalid(f"{path}.apiVersions", versions, "if '*' is present, must not specify other API versions"))
    errs += [required(f"{path}.apiVersions[{i}]") for i, version in enumerate(versions) if not version]
    errs += _resources(rule.resources or [], f"{path}.resources")
    if rule.scope is not None and rule.scope not in SCOPES:
        errs.append(not_supported(f"{path}.scope", rule.scope, sorted(SCOPES)))
    seen: set[str] = set()
    for i, name in enumerate(rule.resource_names or ()):
        errs += [invalid(f"{path}.resourceNames[{i}]", name, msg) for msg in is_path_segment_name(name)]
        if name in seen:
            errs.append(duplicate(f"{path}.resourceNames[{i}]", name))
        seen.add(name)
    return errs


def _selector(selector: LabelSelector | None, path: str, required_here: bool = False) -> list[FieldError]:
    if selector is None:
        return [required(path)] if required_here else []
    return validate_label_selector(selector, path)


def _compile(source: str, declarations: Declarations, path: str, want: str | tuple[str, ...] = "BOOL") -> list[FieldError]:
    """``convertCELErrorToValidationError``: an expression that does not compile is Invalid."""
    try:
        compile_expression(source, declarations, want)
    except CompileError as err:
        return [_refused(path, source, err)]
    return []


def _refused(path: str, source: str, err: CompileError) -> FieldError:
    """``convertCELErrorToValidationError``'s error for an expression refused at compilation."""
    return internal(path, err.detail) if err.internal else invalid(path, source, err.detail)


def _match_conditions(conditions: list[MatchCondition] | None, declarations: Declarations, path: str) -> list[FieldError]:
    """``validateMatchConditions``: at most 64, unique qualified names, boolean expressions."""
    conditions = conditions or []
    errs = [too_many(path, len(conditions), MAX_MATCH_CONDITIONS)] if len(conditions) > MAX_MATCH_CONDITIONS else []
    names: set[str] = set()
    for i, condition in enumerate(conditions):
        at = f"{path}[{i}]"
        expression = condition.expression.strip()
        errs += _compile(expression, declarations, f"{at}.expression") if expression else [required(f"{at}.expression")]
        if not condition.name:
            errs.append(required(f"{at}.name"))
            continue
        errs += [invalid(f"{at}.name", condition.name, msg) for msg in is_qualified_name(condition.name)]
        if condition.name in names:
            errs.append(duplicate(f"{at}.name", condition.name))
        names.add(condition.name)
    return errs


# -- webhook configurations ---------------------------------------------------------------------

def _webhook(hook: Webhook, mutating: bool, opts: _Options, path: str) -> list[FieldError]:
    """``validateValidatingWebhook`` / ``validateMutatingWebhook``."""
    errs = _fully_qualified(f"{path}.name", hook.name)
    for i, rule in enumerate(hook.rules or ()):
        errs += _rule(rule, f"{path}.rules[{i}]")
    if hook.failure_policy is not None and hook.failure_policy not in FAILURE_POLICIES:
        errs.append(not_supported(f"{path}.failurePolicy", hook.failure_policy, sorted(FAILURE_POLICIES)))
    if hook.match_policy is not None and hook.match_policy not in MATCH_POLICIES:
        errs.append(not_supported(f"{path}.matchPolicy", hook.match_policy, sorted(MATCH_POLICIES)))
    allowed = SIDE_EFFECTS if opts.require_no_side_effects else ALL_SIDE_EFFECTS
    if hook.side_effects is None:
        errs.append(required(f"{path}.sideEffects", f"must specify one of {', '.join(allowed)}"))
    elif hook.side_effects not in allowed:
        errs.append(not_supported(f"{path}.sideEffects", hook.side_effects, allowed))
    if hook.timeout_seconds is not None and not 1 <= hook.timeout_seconds <= 30:
        errs.append(invalid(f"{path}.timeoutSeconds", hook.timeout_seconds, "the timeout value must be between 1 and 30 seconds"))
    errs += _selector(hook.namespace_selector, f"{path}.namespaceSelector")
    errs += _selector(hook.object_selector, f"{path}.objectSelector")
    if mutating and hook.reinvocation_policy is not None and hook.reinvocation_policy not in REINVOCATION_POLICIES:
        errs.append(not_supported(f"{path}.reinvocationPolicy", hook.reinvocation_policy, sorted(REINVOCATION_POLICIES)))
    config = hook.client_config
    if (config.url is None) == (config.service is None):
        errs.append(required(f"{path}.clientConfig", "exactly one of url or service is required"))
    elif config.url is not None:
        errs += validate_webhook_url(config.url, f"{path}.clientConfig.url")
    elif config.service is not None:
        service = config.service
        errs += validate_webhook_service(service.name, service.namespace, service.path, service.port,
                                         f"{path}.clientConfig.service")
    if not opts.ignore_match_conditions:
        errs += _match_conditions(hook.match_conditions, Declarations(authorizer=True), f"{path}.matchConditions")
    return errs


def _update_options(obj: WebhookConfiguration, old: WebhookConfiguration) -> _Options:
    """What the old configuration met: an update need not fix what was already stored."""
    hooks, old_hooks = obj.webhooks or [], old.webhooks or []
    names = [hook.name for hook in old_hooks]
    return _Options(
        ignore_match_conditions=len(hooks) == len(old_hooks)
        and all(new.match_conditions == was.match_conditions for new, was in zip(hooks, old_hooks)),
        require_no_side_effects=all(hook.side_effects in SIDE_EFFECTS for hook in old_hooks),
        require_recognized_review_version=all(
            not hook.admission_review_versions or set(hook.admission_review_versions) & set(ADMISSION_REVIEW_VERSIONS)
            for hook in old_hooks),
        require_unique_names=len(names) == len(set(names)),
    )


def validate_webhook_configuration(obj: WebhookConfiguration, *, mutating: bool,
                                   old: WebhookConfiguration | None = None) -> list[FieldError]:
    """A Validating- or MutatingWebhookConfiguration (its metadata is the store's)."""
    opts = _Options() if old is None else _update_options(obj, old)
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, hook in enumerate(obj.webhooks or ()):
        path = f"webhooks[{i}]"
        errs += _webhook(hook, mutating, opts, path)
        errs += validate_review_versions(hook.admission_review_versions or [], ADMISSION_REVIEW_VERSIONS,
                                         opts.require_recognized_review_version, f"{path}.admissionReviewVersions",
                                         f"must specify one of {', '.join(ADMISSION_REVIEW_VERSIONS)}")
        if opts.require_unique_names and hook.name:
            if hook.name in names:
                errs.append(duplicate(f"{path}.name", hook.name))
            names.add(hook.name)
    return errs


# -- policies and bindings ------------------------------------------------------------------------

def _param_kind(kind: ParamKind, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    api_version = kind.api_version or ""
    if not api_version:
        errs.append(required(f"{path}.apiVersion"))
    elif api_version.count("/") > 1:
        errs.append(invalid(f"{path}.apiVersion", api_version, f"unexpected GroupVersion string: {api_version}"))
    elif api_version != "/":
        group, _, version = api_version.rpartition("/")
        if group and (problems := is_dns1123_subdomain(group)):
            errs.append(invalid(f"{path}.apiVersion", group, ",".join(problems)))
        if not version:
            errs.append(invalid(f"{path}.apiVersion", api_version, "version must be specified"))
        elif problems := is_dns1035_label(version):
            errs.append(invalid(f"{path}.apiVersion", version, ",".join(problems)))
    if not kind.kind:
        errs.append(required(f"{path}.kind"))
    elif problems := is_dns1035_label(kind.kind.lower()):
        errs.append(invalid(f"{path}.kind", kind.kind, "may have mixed case, but should otherwise match: " + ",".join(problems)))
    return errs


def _match_resources(match: MatchResources | None, path: str) -> list[FieldError]:
    """``validateMatchResources``: defaulted fields required, selectors strict, the rules."""
    if match is None:
        return []
    errs: list[FieldError] = []
    if match.match_policy is None:
        errs.append(required(f"{path}.matchPolicy"))
    elif match.match_policy not in MATCH_POLICIES:
        errs.append(not_supported(f"{path}.matchPolicy", match.match_policy, sorted(MATCH_POLICIES)))
    errs += _selector(match.namespace_selector, f"{path}.namespaceSelector", required_here=True)
    errs += _selector(match.object_selector, f"{path}.objectSelector", required_here=True)
    for key, rules in (("resourceRules", match.resource_rules), ("excludeResourceRules", match.exclude_resource_rules)):
        for i, rule in enumerate(rules or ()):
            errs += _rule(rule, f"{path}.{key}[{i}]")
    return errs


def _failure_policy(policy: str | None, path: str) -> list[FieldError]:
    if policy is None:
        return [required(path)]
    return [] if policy in FAILURE_POLICIES else [not_supported(path, policy, sorted(FAILURE_POLICIES))]


def _constraints(match: MatchResources | None, path: str) -> list[FieldError]:
    """A policy's matchConstraints: required, with at least one resource rule (the types it checks)."""
    if match is None:
        return [required(path)]
    return _match_resources(match, path) + ([] if match.resource_rules else [required(f"{path}.resourceRules")])


def _variables(variables: list[Variable], declarations: Declarations, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, variable in enumerate(variables):
        at = f"{path}[{i}]"
        if not variable.name.strip():
            errs.append(required(f"{at}.name", "name is not specified"))
        elif not _CEL_IDENTIFIER.fullmatch(variable.name) or variable.name in _CEL_RESERVED:
            errs.append(invalid(f"{at}.name", variable.name, "name is not a valid CEL identifier"))
        if not variable.expression.strip():
            errs.append(required(f"{at}.expression", "expression is not specified"))
        else:
            errs += _compile(variable.expression, declarations, f"{at}.expression", "DYN")
    return errs


def _policy_common(policy_failure: str | None, param_kind: ParamKind | None, match: MatchResources | None,
                   conditions: list[MatchCondition] | None, variables: list[Variable],
                   ignore_conditions: bool) -> tuple[list[FieldError], Declarations]:
    """What both policy kinds check alike; returns the declarations their expressions get."""
    errs = _failure_policy(policy_failure, "spec.failurePolicy")
    if param_kind is not None:
        errs += _param_kind(param_kind, "spec.paramKind")
    errs += _constraints(match, "spec.matchConstraints")
    params = param_kind is not None
    if not ignore_conditions:
        errs += _match_conditions(conditions, Declarations(params=params, authorizer=True), "spec.matchConditions")
    declarations = Declarations(params=params, authorizer=True, variables=bool(variables))
    errs += _variables(variables, declarations, "spec.variables")
    return errs, declarations


def _policy_conditions_unchanged(obj: ValidatingAdmissionPolicy | MutatingAdmissionPolicy,
                                 old: ValidatingAdmissionPolicy | MutatingAdmissionPolicy | None) -> bool:
    return old is not None and obj.spec.param_kind == old.spec.param_kind and obj.spec.match_conditions == old.spec.match_conditions


def validate_validating_policy(obj: ValidatingAdmissionPolicy, *, old: ValidatingAdmissionPolicy | None = None) -> list[FieldError]:
    """``validateValidatingAdmissionPolicySpec``."""
    spec = obj.spec
    errs, declarations = _policy_common(spec.failure_policy, spec.param_kind, spec.match_constraints, spec.match_conditions,
                                        spec.variables or [], _policy_conditions_unchanged(obj, old))
    validations, annotations = spec.validations or [], spec.audit_annotations or []
    if not validations and not annotations:
        detail = "validations or auditAnnotations must contain at least one item"
        return errs + [required("spec.validations", detail), required("spec.auditAnnotations", detail)]
    message_declarations = dataclasses.replace(declarations, authorizer=False)
    for i, validation in enumerate(validations):
        at = f"spec.validations[{i}]"
        if not validation.expression.strip():
            errs.append(required(f"{at}.expression", "expression is not specified"))
        else:
            errs += _compile(validation.expression, declarations, f"{at}.expression")
        message_expression = validation.message_expression or ""
        if message_expression and not message_expression.strip():
            errs.append(invalid(f"{at}.messageExpression", message_expression, "must be non-empty if specified"))
        elif message_expression:
            errs += _compile(message_expression, message_declarations, f"{at}.messageExpression", "STRING")
        message = validation.message or ""
        if message and not message.strip():
            errs.append(invalid(f"{at}.message", message, "message must be non-empty if specified"))
        elif "\n" in message.strip() or "\r" in message.strip():
            errs.append(invalid(f"{at}.message", message, "message must not contain line breaks"))
        if validation.reason is not None and validation.reason not in VALIDATION_REASONS:
            errs.append(not_supported(f"{at}.reason", validation.reason, VALIDATION_REASONS))
    if len(annotations) > MAX_AUDIT_ANNOTATIONS:
        errs.append(invalid("spec.auditAnnotations", annotations, f"must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations"))
    keys: set[str] = set()
    for i, annotation in enumerate(annotations):
        at = f"spec.auditAnnotations[{i}]"
        if obj.metadata.name:
            errs += [invalid(f"{at}.key", f"{obj.metadata.name}/{annotation.key}", msg)
                     for msg in is_qualified_name(f"{obj.metadata.name}/{annotation.key}")]
        else:
            errs.append(invalid(f"{at}.key", annotation.key, "requires metadata.name be non-empty"))
        value = annotation.value_expression.strip()
        if not value:
            errs.append(required(f"{at}.valueExpression", "valueExpression is not specified"))
        elif len(value) > MAX_AUDIT_VALUE_EXPRESSION:
            errs.append(required(f"{at}.valueExpression", f"must not exceed {MAX_AUDIT_VALUE_EXPRESSION} bytes in length"))
        else:
            errs += _compile(value, declarations, f"{at}.valueExpression", ("STRING", "NULL"))
        if annotation.key in keys:
            errs.append(duplicate(f"{at}.key", annotation.key))
        keys.add(annotation.key)
    return errs


def validate_policy_status(status: ValidatingAdmissionPolicyStatus) -> list[FieldError]:
    """``validateValidatingAdmissionPolicyStatus``: each type checking warning says where and what."""
    errs: list[FieldError] = []
    for i, warning in enumerate((status.type_checking.expression_warnings or []) if status.type_checking else []):
        at = f"status.typeChecking.expressionWarnings[{i}]"
        if not warning.warning:
            errs.append(required(f"{at}.warning"))
        if not warning.field_ref.strip():
            errs.append(required(f"{at}.fieldRef"))
    return errs


def _param_ref(ref: ParamRef | None, path: str) -> list[FieldError]:
    if ref is None:
        return []
    errs: list[FieldError] = []
    if ref.name:
        errs += [invalid(f"{path}.name", ref.name, msg) for msg in is_path_segment_name(ref.name)]
        if ref.selector is not None:
            errs.append(forbidden(f"{path}.name", "name and selector are mutually exclusive"))
    if ref.selector is not None:
        errs += validate_label_selector(ref.selector, f"{path}.selector")
        if ref.name:
            errs.append(forbidden(f"{path}.selector", "name and selector are mutually exclusive"))
    if not ref.name and ref.selector is None:
        errs.append(required(path, "one of name or selector must be specified"))
    if not ref.parameter_not_found_action:
        errs.append(required(f"{path}.parameterNotFoundAction"))
    elif ref.parameter_not_found_action not in PARAMETER_NOT_FOUND_ACTIONS:
        errs.append(not_supported(f"{path}.parameterNotFoundAction", ref.parameter_not_found_action, ["Deny", "Allow"]))
    return errs


def _policy_name(name: str | None) -> list[FieldError]:
    if not name:
        return [required("spec.policyName")]
    return [invalid("spec.policyName", name, msg) for msg in is_dns1123_subdomain(name)]


def validate_validating_binding(obj: ValidatingAdmissionPolicyBinding) -> list[FieldError]:
    """``validateValidatingAdmissionPolicyBindingSpec`` (kube's path ``spec.matchResouces``, sic)."""
    spec = obj.spec
    errs = _policy_name(spec.policy_name) + _param_ref(spec.param_ref, "spec.paramRef")
    errs += _match_resources(spec.match_resources, "spec.matchResouces")
    actions, seen = spec.validation_actions or [], set()
    for i, action in enumerate(actions):
        if action not in VALIDATION_ACTIONS:
            errs.append(not_supported(f"spec.validationActions[{i}]", action, VALIDATION_ACTIONS))
        if action in seen:
            errs.append(duplicate(f"spec.validationActions[{i}]", action))
        seen.add(action)
    if {"Deny", "Warn"} <= seen:
        errs.append(invalid("spec.validationActions", actions, "must not contain both Deny and Warn (repeating the same "
                            "validation failure information in the API response and headers serves no purpose)"))
    if not seen:
        errs.append(required("spec.validationActions", "at least one validation action is required"))
    return errs


def validate_mutating_policy(obj: MutatingAdmissionPolicy, *, old: MutatingAdmissionPolicy | None = None) -> list[FieldError]:
    """A MutatingAdmissionPolicy, as its validating sibling is checked; the mutations need a
    known patchType with its own expression (compiled by the mutating policy's engine, which
    knows the object types ApplyConfiguration builds)."""
    spec = obj.spec
    errs, declarations = _policy_common(spec.failure_policy, spec.param_kind, spec.match_constraints,
                                        spec.match_conditions, spec.variables or [], _policy_conditions_unchanged(obj, old))
    if spec.reinvocation_policy is None:
        errs.append(required("spec.reinvocationPolicy"))
    elif spec.reinvocation_policy not in REINVOCATION_POLICIES:
        errs.append(not_supported("spec.reinvocationPolicy", spec.reinvocation_policy, sorted(REINVOCATION_POLICIES)))
    if not spec.mutations:
        errs.append(required("spec.mutations", "mutations must contain at least one item"))
    for i, mutation in enumerate(spec.mutations or ()):
        at = f"spec.mutations[{i}]"
        if not mutation.patch_type:
            errs.append(required(f"{at}.patchType"))
            continue
        if mutation.patch_type not in PATCH_TYPES:
            errs.append(not_supported(f"{at}.patchType", mutation.patch_type, PATCH_TYPES))
            continue
        wanted, other = (("applyConfiguration", "jsonPatch") if mutation.patch_type == APPLY_CONFIGURATION
                         else ("jsonPatch", "applyConfiguration"))
        body = mutation.apply_configuration if mutation.patch_type == APPLY_CONFIGURATION else mutation.json_patch
        stray = mutation.json_patch if mutation.patch_type == APPLY_CONFIGURATION else mutation.apply_configuration
        if body is None:
            errs.append(required(f"{at}.{wanted}", f"{wanted} field is required when patchType is {mutation.patch_type}"))
        elif not (body.expression or "").strip():
            errs.append(required(f"{at}.{wanted}.expression"))
        else:
            try:
                compile_mutation(mutation.patch_type, body.expression, declarations)
            except CompileError as err:
                errs.append(_refused(f"{at}.{wanted}.expression", body.expression, err))
        if stray is not None:
            errs.append(forbidden(f"{at}.{other}", f"{other} field is forbidden when patchType is {mutation.patch_type}"))
    return errs


def validate_mutating_binding(obj: MutatingAdmissionPolicyBinding) -> list[FieldError]:
    spec = obj.spec
    return (_policy_name(spec.policy_name) + _param_ref(spec.param_ref, "spec.paramRef")
            + _match_resources(spec.match_resources, "spec.matchResources"))
