"""What a simulated container sees: its files, environment and host name, made from its Pod as
a kubelet would make them.

* ``/etc/hostname``, ``/etc/hosts`` (kubelet-managed, with the pod's IP, FQDN under a
  ``subdomain`` and ``hostAliases``) and ``/etc/resolv.conf`` (``dnsPolicy`` ClusterFirst: the
  ``kube-dns`` Service's IP, or 10.96.0.10, and the namespace's search path; ``dnsConfig`` added);
* its volume mounts: ``configMap``, ``secret``, ``downwardAPI`` and ``projected`` volumes
  (ConfigMaps, Secrets, downward API ``fieldRef`` fields and a bound ServiceAccount token) hold their files,
  ``subPath`` mounts one of them; any other volume is an empty directory;
* its environment: ``PATH``, ``HOSTNAME``, ``envFrom``, ``env`` (values with ``$(VAR)``
  references, ``fieldRef``, ConfigMap and Secret keys; not ``resourceFieldRef``), the Service
  links of its namespace (``<NAME>_SERVICE_HOST`` ...; the ``kubernetes`` Service's always) and ``HOME``.

ConfigMaps, Secrets, Services and tokens come from :class:`Sources`, loaded by the API server
(:func:`load_sources`); without them (the kubelet's view of a main process, :mod:`.process`)
their files and variables are missing.
"""

from __future__ import annotations

import base64
import contextlib
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kplane.api import APIError, ListOptions, Registry, RequestContext, clock

Obj = dict[str, Any]

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
DNS_SERVICE = ("kube-system", "kube-dns")
DEFAULT_DNS_IP = "10.96.0.10"
CLUSTER_DOMAIN = "cluster.local"
#: The directories every container has, whatever its image.
DIRECTORIES = ("/bin/", "/dev/", "/etc/", "/home/", "/proc/", "/root/", "/tmp/", "/usr/", "/var/")
_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


@dataclass(slots=True)
class Sources:
    """The objects a container's files and environment are made of besides its Pod."""

    configmaps: dict[str, dict[str, bytes]] = field(default_factory=dict)
    secrets: dict[str, dict[str, bytes]] = field(default_factory=dict)
    services: list[Obj] = field(default_factory=list)  # of the pod's namespace, and default/kubernetes
    dns_ip: str = DEFAULT_DNS_IP
    tokens: dict[tuple[str, int], str] = field(default_factory=dict)  # (audience, expirationSeconds) -> token


def hostname(pod: Obj) -> str:
    spec = pod.get("spec") or {}
    return str(spec.get("hostname") or (pod.get("metadata") or {}).get("name") or "localhost")[:63]


def _namespace(pod: Obj) -> str:
    return str((pod.get("metadata") or {}).get("namespace") or "default")


# -- loading --------------------------------------------------------------------------------------
async def load_sources(registry: Registry, ctx: RequestContext, pod: Obj, *, tokens: bool) -> Sources:
    """The ConfigMaps, Secrets and Services ``pod`` refers to, read through the registry (missing
    ones are left out, as an optional reference would be), and with ``tokens`` its projected
    tokens, newly made (an exec may read one; a log is not worth signing one for)."""
    sources = Sources()
    namespace = _namespace(pod)
    wanted: dict[str, set[str]] = {"configmaps": set(), "secrets": set()}
    spec = pod.get("spec") or {}
    for volume in spec.get("volumes") or []:
        for source in [volume, *((volume.get("projected") or {}).get("sources") or [])]:
            if (source.get("configMap") or {}).get("name"):
                wanted["configmaps"].add(source["configMap"]["name"])
            if (source.get("secret") or {}).get("secretName") or (source.get("secret") or {}).get("name"):
                wanted["secrets"].add(source["secret"].get("secretName") or source["secret"]["name"])
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        for item in container.get("envFrom") or []:
            if (item.get("configMapRef") or {}).get("name"):
                wanted["configmaps"].add(item["configMapRef"]["name"])
            if (item.get("secretRef") or {}).get("name"):
                wanted["secrets"].add(item["secretRef"]["name"])
        for env in container.get("env") or []:
            source = env.get("valueFrom") or {}
            if (source.get("configMapKeyRef") or {}).get("name"):
                wanted["configmaps"].add(source["configMapKeyRef"]["name"])
            if (source.get("secretKeyRef") or {}).get("name"):
                wanted["secrets"].add(source["secretKeyRef"]["name"])
    for plural, names in wanted.items():
        for name in sorted(names):
            obj = await _get(registry, ctx, plural, namespace, name)
            if obj is not None:
                getattr(sources, plural)[name] = _data(obj, plural == "secrets")
    sources.services = await _services(registry, ctx, namespace, spec.get("enableServiceLinks", True) is not False)
    dns = await _get(registry, ctx, "services", *DNS_SERVICE)
    if dns is not None and (dns.get("spec") or {}).get("clusterIP") not in (None, "", "None"):
        sources.dns_ip = dns["spec"]["clusterIP"]
    if tokens:
        sources.tokens = await _tokens(registry, ctx, pod)
    return sources


async def _get(registry: Registry, ctx: RequestContext, plural: str, namespace: str, name: str) -> Obj | None:
    store = registry.store("", plural)
    if store is None:
        return None
    try:
        return (await store.get(replace(ctx, resource=plural, subresource="", namespace=namespace, name=name), name)).obj
    except APIError as err:
        if err.code == 404:
            return None
        raise


def _data(obj: Obj, secret: bool) -> dict[str, bytes]:
    if secret:
        return {k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()}
    data = {k: str(v).encode() for k, v in (obj.get("data") or {}).items()}
    data.update({k: base64.b64decode(v) for k, v in (obj.get("binaryData") or {}).items()})
    return data


async def _services(registry: Registry, ctx: RequestContext, namespace: str, links: bool) -> list[Obj]:
    store = registry.store("", "services")
    if store is None:
        return []
    found: list[Obj] = []
    for where in ({namespace, "default"} if links else {"default"}):
        page = await store.list(replace(ctx, resource="services", subresource="", namespace=where, name=""), ListOptions())
        found += [o.obj for o in page.items
                  if (where == namespace and links) or (o.obj.get("metadata") or {}).get("name") == "kubernetes"]
    return found


async def _tokens(registry: Registry, ctx: RequestContext, pod: Obj) -> dict[tuple[str, int], str]:
    """A token bound to the pod for each projected ``serviceAccountToken`` source, as the kubelet
    asks for them (TokenRequest)."""
    spec, meta = pod.get("spec") or {}, pod.get("metadata") or {}
    account = spec.get("serviceAccountName") or "default"
    served = registry.rest("", "serviceaccounts", "token")
    tokens: dict[tuple[str, int], str] = {}
    if served is None:
        return tokens
    for volume in spec.get("volumes") or []:
        for source in (volume.get("projected") or {}).get("sources") or []:
            token = source.get("serviceAccountToken")
            if not isinstance(token, dict):
                continue
            key = (str(token.get("audience") or ""), int(token.get("expirationSeconds") or 3600))
            body: Obj = {"spec": {"expirationSeconds": key[1], "boundObjectRef": {
                "kind": "Pod", "apiVersion": "v1", "name": meta.get("name"), "uid": meta.get("uid")}}}
            if key[0]:
                body["spec"]["audiences"] = [key[0]]
            with contextlib.suppress(APIError):
                made = await served.create(replace(ctx, resource="serviceaccounts", subresource="token", name=account,  # type: ignore[attr-defined]
                                                   namespace=_namespace(pod)), body)
                tokens[key] = made["status"]["token"]
    return tokens


# -- files ------------------------------------------------------------------------------------------
def container_files(pod: Obj, container: Obj, sources: Sources) -> dict[str, bytes]:
    """Every file of the container, by absolute path (a path ending in ``/`` is a directory)."""
    files: dict[str, bytes] = dict.fromkeys(DIRECTORIES, b"")
    files["/etc/hostname"] = (hostname(pod) + "\n").encode()
    files["/etc/hosts"] = _hosts(pod).encode()
    files["/etc/resolv.conf"] = _resolv(pod, sources).encode()
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or []}
    for mount in container.get("volumeMounts") or []:
        volume = volumes.get(mount.get("name"))
        where = posixpath.normpath("/" + str(mount.get("mountPath") or "").lstrip("/"))
        content = _volume(pod, volume or {}, sources)
        sub = str(mount.get("subPath") or "").strip("/")
        if sub:
            if sub in content:
                files[where] = content[sub]
            else:
                files.update({posixpath.join(where, k[len(sub) + 1:]): v for k, v in content.items() if k.startswith(sub + "/")})
                files.setdefault(where + "/", b"")
            continue
        files[where.rstrip("/") + "/"] = b""
        files.update({posixpath.join(where, key): value for key, value in content.items()})
    return files


def _hosts(pod: Obj) -> str:
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    lines = ["# Kubernetes-managed hosts file.", "127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback",
             "fe00::0\tip6-localnet", "fe00::0\tip6-mcastprefix", "fe00::1\tip6-allnodes", "fe00::2\tip6-allrouters"]
    ip = status.get("podIP")
    if ip:
        name = hostname(pod)
        subdomain = spec.get("subdomain")
        fqdn = f"{name}.{subdomain}.{_namespace(pod)}.svc.{CLUSTER_DOMAIN}" if subdomain else ""
        lines.append(f"{ip}\t{fqdn}\t{name}" if fqdn else f"{ip}\t{name}")
    aliases = spec.get("hostAliases") or []
    if aliases:
        lines.append("")
        lines.append("# Entries added by HostAliases.")
        lines += [f"{a.get('ip')}\t" + "\t".join(a.get("hostnames") or []) for a in aliases]
    return "\n".join(lines) + "\n"


def _resolv(pod: Obj, sources: Sources) -> str:
    spec = pod.get("spec") or {}
    policy = spec.get("dnsPolicy") or "ClusterFirst"
    if policy == "ClusterFirstWithHostNet" or (policy == "ClusterFirst" and not spec.get("hostNetwork")):
        namespace = _namespace(pod)
        servers = [sources.dns_ip]
        searches = [f"{namespace}.svc.{CLUSTER_DOMAIN}", f"svc.{CLUSTER_DOMAIN}", CLUSTER_DOMAIN]
        options = ["ndots:5"]
    elif policy == "None":
        servers, searches, options = [], [], []
    else:  # Default, or ClusterFirst with the host's network: the node's own
        servers, searches, options = ["10.244.0.1"], [], []
    config = spec.get("dnsConfig") or {}
    servers += [s for s in config.get("nameservers") or [] if s not in servers]
    searches += [s for s in config.get("searches") or [] if s not in searches]
    for option in config.get("options") or []:
        text = option.get("name", "") + (f":{option['value']}" if option.get("value") is not None else "")
        options = [o for o in options if o.split(":")[0] != option.get("name")] + [text]
    lines = []
    if searches:
        lines.append("search " + " ".join(searches))
    lines += [f"nameserver {server}" for server in servers]
    if options:
        lines.append("options " + " ".join(options))
    return "\n".join(lines) + "\n"


def _volume(pod: Obj, volume: Obj, sources: Sources) -> dict[str, bytes]:
    """The files of one volume, by path inside it."""
    if "configMap" in volume:
        return _keyed(sources.configmaps.get((volume["configMap"] or {}).get("name", "")), volume["configMap"])
    if "secret" in volume:
        return _keyed(sources.secrets.get((volume["secret"] or {}).get("secretName", "")), volume["secret"])
    if "downwardAPI" in volume:
        return _downward(pod, volume["downwardAPI"] or {})
    if "projected" in volume:
        content: dict[str, bytes] = {}
        for source in (volume["projected"] or {}).get("sources") or []:
            if "configMap" in source:
                content.update(_keyed(sources.configmaps.get(source["configMap"].get("name", "")), source["configMap"]))
            elif "secret" in source:
                content.update(_keyed(sources.secrets.get(source["secret"].get("name", "")), source["secret"]))
            elif "downwardAPI" in source:
                content.update(_downward(pod, source["downwardAPI"] or {}))
            elif isinstance(source.get("serviceAccountToken"), dict):
                token = source["serviceAccountToken"]
                key = (str(token.get("audience") or ""), int(token.get("expirationSeconds") or 3600))
                if key in sources.tokens:
                    content[str(token.get("path") or "token")] = sources.tokens[key].encode()
        return content
    return {}


def _keyed(data: dict[str, bytes] | None, source: Obj) -> dict[str, bytes]:
    """A ConfigMap's or Secret's keys as files, or only its ``items``, each at its path."""
    if data is None:
        return {}
    items = source.get("items")
    if not items:
        return dict(data)
    return {str(item.get("path") or item.get("key")): data[item["key"]] for item in items if item.get("key") in data}


def _downward(pod: Obj, source: Obj) -> dict[str, bytes]:
    content: dict[str, bytes] = {}
    for item in source.get("items") or []:
        value = field_value(pod, (item.get("fieldRef") or {}).get("fieldPath", ""), file=True)
        if value is not None:
            content[str(item.get("path"))] = value.encode()
    return content


def field_value(pod: Obj, path: str, *, file: bool = False) -> str | None:
    """A downward API field of the pod (``metadata.labels`` whole only in a file)."""
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    simple = {"metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace"), "metadata.uid": meta.get("uid"),
              "spec.nodeName": spec.get("nodeName"), "spec.serviceAccountName": spec.get("serviceAccountName"),
              "status.hostIP": status.get("hostIP"), "status.podIP": status.get("podIP"),
              "status.podIPs": ",".join(i.get("ip", "") for i in status.get("podIPs") or []),
              "status.hostIPs": ",".join(i.get("ip", "") for i in status.get("hostIPs") or [])}
    if path in simple:
        return str(simple[path] or "")
    for kind in ("labels", "annotations"):
        values: Mapping[str, str] = meta.get(kind) or {}
        if path == f"metadata.{kind}" and file:
            return "".join(f'{k}="{v}"\n' for k, v in sorted(values.items()))
        found = re.fullmatch(rf"metadata\.{kind}\['([^']*)'\]", path)
        if found:
            return str(values.get(found.group(1), ""))
    return None


# -- environment ---------------------------------------------------------------------------------------
def expand(text: str, env: Mapping[str, str]) -> str:
    """Kubernetes' ``$(VAR)`` references: a defined one is replaced, ``$$`` is ``$``, others stay."""
    def sub(found: re.Match[str]) -> str:
        if found.group(0) == "$$":
            return "$"
        name = found.group(1)
        return env[name] if name in env else found.group(0)
    return _REFERENCE.sub(sub, text)


def container_env(pod: Obj, container: Obj, sources: Sources) -> dict[str, str]:
    env: dict[str, str] = {"PATH": PATH, "HOSTNAME": hostname(pod)}
    for item in container.get("envFrom") or []:
        prefix = str(item.get("prefix") or "")
        if "configMapRef" in item:
            data = sources.configmaps.get((item["configMapRef"] or {}).get("name", ""), {})
        else:
            data = sources.secrets.get((item.get("secretRef") or {}).get("name", ""), {})
        env.update({prefix + k: v.decode(errors="replace") for k, v in data.items()})
    for var in container.get("env") or []:
        name = str(var.get("name") or "")
        source = var.get("valueFrom")
        if not source:
            env[name] = expand(str(var.get("value") or ""), env)
            continue
        value: str | bytes | None = None
        if "fieldRef" in source:
            value = field_value(pod, (source["fieldRef"] or {}).get("fieldPath", ""))
        elif "configMapKeyRef" in source:
            ref = source["configMapKeyRef"] or {}
            value = sources.configmaps.get(ref.get("name", ""), {}).get(ref.get("key", ""))
        elif "secretKeyRef" in source:
            ref = source["secretKeyRef"] or {}
            value = sources.secrets.get(ref.get("name", ""), {}).get(ref.get("key", ""))
        if value is not None:
            env[name] = value.decode(errors="replace") if isinstance(value, bytes) else value
    for service in sources.services:
        for name, value in service_env(service).items():
            env.setdefault(name, value)
    env.setdefault("HOME", "/root")
    return env


def service_env(service: Obj) -> dict[str, str]:
    """The Docker-link variables the kubelet sets for a Service with a cluster IP."""
    spec = service.get("spec") or {}
    ip = spec.get("clusterIP")
    if not ip or ip == "None":
        return {}
    name = str((service.get("metadata") or {}).get("name") or "").upper().replace("-", "_")
    ports = spec.get("ports") or []
    env: dict[str, str] = {f"{name}_SERVICE_HOST": ip}
    if not ports:
        return env
    env[f"{name}_SERVICE_PORT"] = str(ports[0].get("port"))
    for port in ports:
        if port.get("name"):
            env[f"{name}_SERVICE_PORT_{str(port['name']).upper().replace('-', '_')}"] = str(port.get("port"))
    first = ports[0]
    env[f"{name}_PORT"] = f"{str(first.get('protocol') or 'TCP').lower()}://{ip}:{first.get('port')}"
    for port in ports:
        protocol = str(port.get("protocol") or "TCP")
        prefix = f"{name}_PORT_{port.get('port')}_{protocol}"
        env[prefix] = f"{protocol.lower()}://{ip}:{port.get('port')}"
        env[f"{prefix}_PROTO"] = protocol.lower()
        env[f"{prefix}_PORT"] = str(port.get("port"))
        env[f"{prefix}_ADDR"] = ip
    return env


def started_at(pod: Obj, container_name: str) -> float:
    """When the container's current instance started (now when it has not yet)."""
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if status.get("name") == container_name:
            state = status.get("state") or {}
            moment = (state.get("running") or state.get("terminated") or {}).get("startedAt")
            if moment:
                return clock.epoch(moment)
    return clock.epoch(clock.now())
