"""Who the client is: the one place that decides a request's client address, read by every limit.

The app limits visitors (model steps, call budgets, queue places, resumes) and sign-ins per client
address. Behind a reverse proxy (a Hugging Face Space, nginx) the socket's peer is the proxy, and the
client is in ``X-Forwarded-For``; straight from the internet the peer *is* the client and the header is
whatever it chose to send. :class:`TrustedProxies` (setting ``trusted_proxies``) says which peers are
proxies; :func:`resolve` walks ``X-Forwarded-For`` from the right, past every trusted proxy, and takes
the first address that is not one (RFC 7239 §7.4; the same walk as uvicorn's ``ProxyHeadersMiddleware``,
which rewrites ``scope["client"]`` only for ``FORWARDED_ALLOW_IPS``, default 127.0.0.1 — a subset of the
default here, so the two agree on a proxy on the same host).

:class:`ClientAddress` (ASGI middleware, first in the app's stack) resolves each HTTP request once and
puts the address in ``scope["state"]["lawluo_client"]`` and in the context variable
:data:`CLIENT_ADDRESS`; the sign-in check (``eval_ui.login``), the queue gate
(:mod:`lawluo.ui.gate`) and the consultation's visitor (:func:`lawluo.ui.visitors.visit_of`) read it
from there, so they can never disagree about who the client is.

    policy = TrustedProxies.parse("loopback,private")
    resolve("10.0.0.7", "203.0.113.9, 10.0.0.5", policy)   # '203.0.113.9'
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass

from starlette.middleware import Middleware

#: The resolved client address of the HTTP request being served (set by :class:`ClientAddress`), else None.
CLIENT_ADDRESS: ContextVar[str | None] = ContextVar("lawluo_client_address", default=None)

#: The key of the resolved address in an ASGI scope's ``state`` (``request.state.lawluo_client``).
STATE_KEY = "lawluo_client"

#: Named groups of networks a ``trusted_proxies`` setting may use beside CIDRs.
NAMED_NETWORKS: dict[str, tuple[str, ...]] = {
    "loopback": ("127.0.0.0/8", "::1/128"),
    # RFC 1918, RFC 4193 and the carrier-grade NAT range: where a hosting platform's proxies live
    "private": ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7"),
}
DEFAULT_TRUSTED = "loopback,private"

_Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class TrustedProxies:
    """The networks whose requests are taken to come through a reverse proxy of the deployment."""

    networks: tuple[_Network, ...] = ()

    @classmethod
    def parse(cls, spec: str | None) -> TrustedProxies:
        """From a comma-separated list of CIDRs, addresses, ``loopback``, ``private`` or ``none``.

        >>> TrustedProxies.parse("loopback").trusts("127.0.0.1"), TrustedProxies.parse("none").trusts("127.0.0.1")
        (True, False)
        >>> TrustedProxies.parse("10.1.0.0/16, private").trusts("192.168.3.4")
        True
        >>> TrustedProxies.parse("nonsense")
        Traceback (most recent call last):
        ...
        ValueError: trusted_proxies: 'nonsense' is not an address, a network (CIDR), loopback, private or none
        """
        networks: list[_Network] = []
        for part in (p.strip() for p in (spec if spec is not None else DEFAULT_TRUSTED).split(",")):
            if not part or part == "none":
                continue
            for cidr in NAMED_NETWORKS.get(part, (part,)):
                try:
                    networks.append(ipaddress.ip_network(cidr, strict=False))
                except ValueError:
                    raise ValueError(
                        f"trusted_proxies: {part!r} is not an address, a network (CIDR), loopback, private or none"
                    ) from None
        return cls(tuple(networks))

    def trusts(self, address: str) -> bool:
        ip = _ip(address)
        return ip is not None and any(ip.version == n.version and ip in n for n in self.networks)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # "[::1]:8080"
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # "1.2.3.4:5678"
        text = text.split(":", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def resolve(peer: str | None, forwarded_for: str | None, trusted: TrustedProxies) -> str:
    """The client address of a request from ``peer`` carrying ``X-Forwarded-For: forwarded_for``.

    Hops are walked from the nearest (the peer) outwards while each is a trusted proxy; the first one that
    is not is the client. A header from an untrusted peer is ignored; an entry that is not an IP address
    (garbage, ``unknown``) ends the walk at the hop that reported it.

    >>> p = TrustedProxies.parse("loopback,private")
    >>> resolve("203.0.113.9", "1.2.3.4", p)            # a public peer: its header is its own invention
    '203.0.113.9'
    >>> resolve("127.0.0.1", "1.2.3.4, 198.51.100.2", p)  # the proxy saw 198.51.100.2; 1.2.3.4 was sent by it
    '198.51.100.2'
    >>> resolve("10.0.0.7", "198.51.100.2, 10.0.0.5", p)  # two proxies of the platform
    '198.51.100.2'
    >>> resolve("127.0.0.1", "10.0.0.1", p)              # every hop trusted: the farthest one
    '10.0.0.1'
    >>> resolve("127.0.0.1", "evil, 198.51.100.2", p), resolve("127.0.0.1", "<x>", p)
    ('198.51.100.2', '127.0.0.1')
    >>> resolve(None, None, p)
    ''
    """
    current = (peer or "").strip()
    if not current or not trusted.trusts(current) or not forwarded_for:
        return current
    for hop in reversed([h.strip() for h in forwarded_for.split(",")[-32:] if h.strip()]):
        ip = _ip(hop)
        if ip is None:
            return current
        current = str(ip)
        if not trusted.trusts(current):
            return current
    return current


def header(headers: Iterable[tuple[bytes, bytes]] | Mapping[str, str], name: str) -> str | None:
    """All values of header ``name`` joined by commas, from ASGI raw headers or a (lower-case) mapping."""
    if isinstance(headers, Mapping):
        return headers.get(name)
    key = name.encode("latin-1")
    values = [v.decode("latin-1") for k, v in headers if k.lower() == key]
    return ", ".join(values) if values else None


def scope_address(scope: Mapping, trusted: TrustedProxies) -> str:
    """The client address of an ASGI ``scope`` (the one :class:`ClientAddress` stored, else resolved)."""
    state = scope.get("state") or {}
    if STATE_KEY in state:
        return state[STATE_KEY]
    peer = (scope.get("client") or (None,))[0]
    return resolve(peer, header(scope.get("headers") or [], "x-forwarded-for"), trusted)


class ClientAddress:
    """ASGI middleware: resolves the client address once per HTTP request (and websocket) and keeps it in
    ``scope["state"]`` and :data:`CLIENT_ADDRESS` while the app serves the request."""

    def __init__(self, app, trusted: TrustedProxies | None = None) -> None:
        self.app = app
        self.trusted = trusted if trusted is not None else TrustedProxies.parse(DEFAULT_TRUSTED)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        address = scope_address(scope, self.trusted)
        scope.setdefault("state", {})[STATE_KEY] = address
        token = CLIENT_ADDRESS.set(address)
        try:
            await self.app(scope, receive, send)
        finally:
            CLIENT_ADDRESS.reset(token)


def client_address_middleware(trusted: TrustedProxies | None = None) -> Middleware:
    """:class:`ClientAddress` for ``launch(app_kwargs={"middleware": [...]})`` (put it first)."""
    return Middleware(ClientAddress, trusted=trusted)


def request_address(request, trusted: TrustedProxies | None = None) -> str:
    """The client address of a ``gr.Request`` or Starlette ``Request`` (``""`` for ``None``): the one the
    middleware resolved for it, else resolved here with ``trusted`` (default: loopback and private peers)."""
    if request is None:
        return ""
    inner = getattr(request, "request", None)  # gr.Request wraps the Starlette request of the event
    scope = getattr(inner if inner is not None else request, "scope", None)
    if isinstance(scope, Mapping) and STATE_KEY in (scope.get("state") or {}):
        return scope["state"][STATE_KEY]
    trusted = trusted if trusted is not None else TrustedProxies.parse(DEFAULT_TRUSTED)
    headers = getattr(request, "headers", None) or {}
    client = getattr(request, "client", None)
    peer = getattr(client, "host", "") or ""
    return resolve(peer, header(headers, "x-forwarded-for"), trusted)
