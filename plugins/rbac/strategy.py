"""Role, ClusterRole, RoleBinding and ClusterRoleBinding behaviour (``pkg/registry/rbac/*``): names
are path segments, validation as ``pkg/apis/rbac/validation``, kubectl's columns. Privilege
escalation is checked by the plugin's admission (:mod:`kplane.plugins.rbac.escalation`), which
knows who asks."""

from __future__ import annotations

from kplane.api import FieldError, RequestContext, Strategy, is_path_segment_name
from kplane.plugins.rbac import printers, validation
from kplane.plugins.rbac.types import ClusterRole, ClusterRoleBinding, Role, RoleBinding


class _RBACStrategy(Strategy):
    name_validator = staticmethod(is_path_segment_name)


class RoleStrategy(_RBACStrategy):
    columns = printers.ROLE_COLUMNS

    def validate(self, ctx: RequestContext, obj: Role) -> list[FieldError]:
        return validation.validate_rules(obj.rules, namespaced=True)

    def validate_update(self, ctx: RequestContext, obj: Role, old: Role) -> list[FieldError]:
        return self.validate(ctx, obj)


class ClusterRoleStrategy(_RBACStrategy):
    columns = printers.ROLE_COLUMNS

    def validate(self, ctx: RequestContext, obj: ClusterRole) -> list[FieldError]:
        return validation.validate_rules(obj.rules, namespaced=False)

    def validate_update(self, ctx: RequestContext, obj: ClusterRole, old: ClusterRole) -> list[FieldError]:
        return self.validate(ctx, obj)


class RoleBindingStrategy(_RBACStrategy):
    columns = printers.BINDING_COLUMNS

    def validate(self, ctx: RequestContext, obj: RoleBinding) -> list[FieldError]:
        return validation.validate_binding(obj.subjects, obj.role_ref, namespaced=True)

    def validate_update(self, ctx: RequestContext, obj: RoleBinding, old: RoleBinding) -> list[FieldError]:
        return self.validate(ctx, obj) + validation.validate_role_ref_update(obj.role_ref, old.role_ref)


class ClusterRoleBindingStrategy(_RBACStrategy):
    columns = printers.BINDING_COLUMNS

    def validate(self, ctx: RequestContext, obj: ClusterRoleBinding) -> list[FieldError]:
        return validation.validate_binding(obj.subjects, obj.role_ref, namespaced=False)

    def validate_update(self, ctx: RequestContext, obj: ClusterRoleBinding, old: ClusterRoleBinding) -> list[FieldError]:
        return self.validate(ctx, obj) + validation.validate_role_ref_update(obj.role_ref, old.role_ref)
