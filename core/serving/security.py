"""Who sends each request and what they may do, assembled from a server's configuration: the
authenticators (the server's own tokens, those the flags configure, the host's TokenReview),
the authorization modes, the audit log, and the filters each installs at its stage.

The server's own clients (the loopback informers, each in-process controller) send tokens made
anew by each process and never written anywhere; :attr:`Security.own_tokens` holds them, as
users, and the limits of :mod:`kplane.core.server.filters` let them through.
"""

from __future__ import annotations

import logging
import secrets
import uuid

from aiohttp import web

from kplane.core.audit.filter import Auditor, auditor_from
from kplane.core.audit.policy import PolicyError
from kplane.core.authn.authenticators import Authenticators, StaticTokens
from kplane.core.authn.clientcert import CertificateAuthority, ClientCertificates
from kplane.core.authn.configured import AuthenticationConfigError, add_configured
from kplane.core.authn.filter import authentication_filter
from kplane.core.authn.impersonation import impersonation_filter
from kplane.core.authn.user import APISERVER, SYSTEM_MASTERS, UserInfo
from kplane.core.authz.authorizers import ALWAYS_ALLOW, Authorizers
from kplane.core.authz.filter import authorization_filter
from kplane.core.client.kubeconfig import KubeconfigError
from kplane.core.client.rest import RESTClient
from kplane.core.config import ServerConfig
from kplane.core.server.filterchain import AUDIT, AUTHENTICATION, AUTHORIZATION, IMPERSONATION, FilterChain
from kplane.core.serving.datadir import StartupError
from kplane.core.serving.delegation import delegate
from kplane.core.serving.tls import is_loopback

log = logging.getLogger(__name__)

# Who the server's own clients are (kube-apiserver's loopback client): allowed everything.
LOOPBACK_USER = UserInfo(APISERVER, uid=str(uuid.uuid4()), groups=(SYSTEM_MASTERS,))


class Security:
    """One server's authenticators, authorizers and auditor; :meth:`configure`, then
    :meth:`install` into the filter chain, then :meth:`close` on the way down."""

    def __init__(self, config: ServerConfig) -> None:
        self.loopback_token = secrets.token_urlsafe(32)
        #: The server's own tokens: the loopback one, and one per in-process controller.
        self.own_tokens = StaticTokens({self.loopback_token: LOOPBACK_USER})
        self.authenticators = Authenticators(anonymous=config.authentication.anonymous)
        self.authenticators.add_token("loopback", self.own_tokens)
        self.authorizers = Authorizers(config.authorization.modes)
        self.auditor: Auditor | None = None
        self._host_clients: list[RESTClient] = []  # to the host this server extends, if any

    def open_audit_log(self, config: ServerConfig) -> None:
        """The auditor ``--audit-*`` ask for; a bad policy or log file stops the start, saying why."""
        try:
            self.auditor = auditor_from(config.audit)
        except PolicyError as err:
            raise StartupError(f"loading audit policy file: {err}") from None
        except OSError as err:
            raise StartupError(f"cannot open the audit log {config.audit.log_path}: {err.strerror}") from None

    def configure(self, config: ServerConfig) -> None:
        """The authenticators the flags configure, then the host's (a token file's users are
        asked before the host's TokenReview)."""
        try:
            add_configured(self.authenticators, config.authentication)
        except AuthenticationConfigError as err:
            raise StartupError(str(err)) from None
        try:
            self._host_clients = delegate(config.delegation, self.authenticators, self.authorizers)
        except KubeconfigError as err:
            raise StartupError(f"cannot delegate authentication or authorization: {err}") from None

    def check_modes(self) -> None:
        """Once the plugins offered theirs: every mode ``--authorization-mode`` names exists."""
        unknown = self.authorizers.unknown_modes()
        if unknown:
            raise StartupError(f"--authorization-mode names modes no plugin offers: {', '.join(unknown)} "
                               "(RBAC is the rbac plugin's; AlwaysAllow and AlwaysDeny are kplane's own, Webhook "
                               "comes with --authorization-kubeconfig)")

    def install(self, filters: FilterChain) -> None:
        """kplane's own filters, first at their stages (before the plugins')."""
        if self.auditor is not None:  # first: it also records the requests authentication refuses
            filters.add(AUTHENTICATION, "AuditInit", self.auditor.init_filter)
        filters.add(AUTHENTICATION, "Authentication", authentication_filter(self.authenticators))
        filters.add(IMPERSONATION, "Impersonation", impersonation_filter(self.authorizers))
        if self.auditor is not None:
            filters.add(AUDIT, "Audit", self.auditor.audit_filter)
        filters.add(AUTHORIZATION, "Authorization", authorization_filter(self.authorizers))

    def attach(self, app: web.Application) -> None:
        """The audit log's hook on every answer (its ``Audit-Id``, a stream's ResponseStarted)."""
        if self.auditor is not None:
            app.on_response_prepare.append(self.auditor.response_prepared)
            self.auditor.start()

    def trust_client_ca(self, authority: CertificateAuthority) -> None:
        """Users' client certificates signed by kplane's own CA (made with the serving certificate)."""
        self.authenticators.add_request("x509", ClientCertificates(authority))

    async def close(self) -> None:
        for client in self._host_clients:
            await client.close()
        if self.auditor is not None:
            await self.auditor.stop()
            self.auditor = None


def warn_if_open(config: ServerConfig) -> None:
    """AlwaysAllow lets whoever reaches the port do anything (over --http every request is
    anonymous, since clients send no credentials there): say so, and to whom."""
    if ALWAYS_ALLOW not in config.authorization.modes:
        return
    who = "anyone on this machine" if is_loopback(config.address) else \
        f"anyone who can reach {config.address or 'any address of this machine'}"
    log.warning("--authorization-mode %s: %s can read and change everything, Secrets included",
                ",".join(config.authorization.modes), who)
