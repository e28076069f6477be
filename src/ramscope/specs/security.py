"""Security scheme objects -> :class:`SecurityScheme`, one reader for every spec that has them.

OpenAPI 3 defines the object (``type``, ``description``, ``in``/``name``, ``scheme``/``bearerFormat``,
``openIdConnectUrl``, ``flows``); Swagger 2.0 has it with one ``flow``; A2A 0.3 cards use OpenAPI's
as it is, and A2A 1.0 cards wrap each kind in a oneof (``oauth2SecurityScheme`` ...) whose fields
are the same but for the API key's ``location``, with ProtoJSON's alternative snake_case names. The
callers decide the kind (each format says it its own way, and treats an unknown one its own way);
the fields of each kind and the OAuth flows are read here, with the same checks and diagnostics.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..diagnostics import Diagnostic, join_pointer
from ..documents import camel_to_snake
from ._doc import INVALID_SECURITY_SCHEME
from .model import FlowKind, OAuthFlow, SchemeType, SecurityScheme

__all__ = [
    "A2A_FLOWS",
    "OAS3_FLOWS",
    "FieldGetter",
    "SchemeReader",
    "plain_field",
    "proto_field",
    "scheme_type",
]

#: A field of an object by its (camelCase) name.
FieldGetter = Callable[[Mapping[str, Any], str], Any]

#: ``type`` values, lower-cased: OpenAPI's are case-insensitive in practice (``apikey``, ``apiKey``).
_SCHEME_TYPES = {
    "apikey": SchemeType.API_KEY,
    "http": SchemeType.HTTP,
    "oauth2": SchemeType.OAUTH2,
    "openidconnect": SchemeType.OPENID_CONNECT,
    "mutualtls": SchemeType.MUTUAL_TLS,
}

#: OAS 3 flow names; ``deviceAuthorization`` is OAS 3.2's (RFC 8628).
OAS3_FLOWS: Mapping[str, FlowKind] = {
    "implicit": FlowKind.IMPLICIT,
    "password": FlowKind.PASSWORD,
    "clientCredentials": FlowKind.CLIENT_CREDENTIALS,
    "authorizationCode": FlowKind.AUTHORIZATION_CODE,
    "deviceAuthorization": FlowKind.DEVICE_CODE,
}

_A2A_FLOWS = {
    "authorizationCode": FlowKind.AUTHORIZATION_CODE,
    "clientCredentials": FlowKind.CLIENT_CREDENTIALS,
    "deviceCode": FlowKind.DEVICE_CODE,
    "implicit": FlowKind.IMPLICIT,
    "password": FlowKind.PASSWORD,
}
#: A2A's flow names (1.0 adds ``deviceCode``), by their ProtoJSON and their proto names.
A2A_FLOWS: Mapping[str, FlowKind] = {**_A2A_FLOWS, **{camel_to_snake(k): v for k, v in _A2A_FLOWS.items()}}


def scheme_type(raw: Any) -> SchemeType | None:
    """The kind a ``type`` value names, ``None`` if it names none."""
    return _SCHEME_TYPES.get(raw.lower()) if isinstance(raw, str) else None


def plain_field(d: Mapping[str, Any], camel: str) -> Any:
    """A JSON field by its name (OpenAPI, A2A 0.3)."""
    return d.get(camel)


def proto_field(d: Mapping[str, Any], camel: str) -> Any:
    """A field by its ProtoJSON name, or by its proto (snake_case) name, which ProtoJSON parsers accept too."""
    if camel in d:
        return d[camel]
    return d.get(camel_to_snake(camel))


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


class SchemeReader:
    """Reads scheme objects of one format, handing what is wrong to ``report``.

    ``flow_names``: the flow names the format defines; ``field``: how a field is found;
    ``api_key_in``: the field naming an API key's location; ``text_limit``/``item_limit``: the
    longest scheme and scope descriptions kept (``None``: as written), for formats whose documents
    are not otherwise bounded.
    """

    def __init__(
        self,
        report: Callable[[Diagnostic], object],
        *,
        flow_names: Mapping[str, FlowKind] = OAS3_FLOWS,
        field: FieldGetter = plain_field,
        api_key_in: str = "in",
        text_limit: int | None = None,
        item_limit: int | None = None,
    ) -> None:
        self.report = report
        self.flow_names = flow_names
        self.field = field
        self.api_key_in = api_key_in
        self.text_limit = text_limit
        self.item_limit = item_limit

    def read(
        self,
        name: str,
        kind: SchemeType,
        d: Mapping[str, Any],
        ptr: str,
        *,
        flows: tuple[OAuthFlow, ...] | None = None,
        description: str = "",
    ) -> SecurityScheme:
        """Scheme ``name`` of ``kind`` from its object ``d`` at ``ptr``; an OAuth2 scheme's ``flows``
        are read from ``d`` unless given (Swagger 2.0's single flow), ``description`` is appended to
        its own."""
        desc = _bounded(_str(d.get("description")), self.text_limit)
        if description:
            desc = f"{desc} {description}" if desc else description
        get = self.field
        if kind is SchemeType.API_KEY:
            return SecurityScheme(
                name, kind, desc, api_key_in=_str(d.get(self.api_key_in)), api_key_name=_str(d.get("name"))
            )
        if kind is SchemeType.HTTP:
            return SecurityScheme(
                name,
                kind,
                desc,
                http_scheme=_str(d.get("scheme")).lower(),
                bearer_format=_str(get(d, "bearerFormat")),
            )
        if kind is SchemeType.OPENID_CONNECT:
            return SecurityScheme(name, kind, desc, open_id_connect_url=_str(get(d, "openIdConnectUrl")))
        if kind is SchemeType.OAUTH2:
            read = self.flows(name, get(d, "flows"), ptr) if flows is None else flows
            return SecurityScheme(name, kind, desc, flows=read)
        return SecurityScheme(name, kind, desc)

    def flows(self, name: str, raw: Any, ptr: str) -> tuple[OAuthFlow, ...]:
        """The flows of OAuth2 scheme ``name`` (its ``flows`` object ``raw``, the scheme at ``ptr``):
        an unknown or malformed flow is left out, and said; so is a scheme left with none."""
        at = join_pointer(ptr, "flows")
        if not isinstance(raw, dict):
            self.report(
                INVALID_SECURITY_SCHEME(at, f"oauth2 scheme {name!r} has no flows object", data={"scheme": name})
            )
            return ()
        flows: list[OAuthFlow] = []
        for flow_name, f in raw.items():
            if flow_name.startswith("x-"):
                continue
            kind = self.flow_names.get(flow_name)
            if kind is None or not isinstance(f, dict):
                self.report(
                    INVALID_SECURITY_SCHEME(
                        join_pointer(at, flow_name),
                        f"oauth2 scheme {name!r}: unknown or malformed flow {flow_name[:40]!r}; ignored",
                        data={"scheme": name},
                    )
                )
                continue
            get = self.field
            authorization = get(f, "authorizationUrl")
            if kind is FlowKind.DEVICE_CODE:
                authorization = get(f, "deviceAuthorizationUrl") or authorization
            flows.append(
                OAuthFlow(
                    kind,
                    authorization_url=_str(authorization),
                    token_url=_str(get(f, "tokenUrl")),
                    refresh_url=_str(get(f, "refreshUrl")),
                    scopes=self.scopes(f.get("scopes")),
                )
            )
        if not flows:
            self.report(
                INVALID_SECURITY_SCHEME(at, f"oauth2 scheme {name!r} has no usable flow", data={"scheme": name})
            )
        return tuple(flows)

    def scopes(self, raw: Any) -> tuple[tuple[str, str], ...]:
        """A flow's ``scopes`` object: (scope, its description), in the document's order."""
        if not isinstance(raw, dict):
            return ()
        return tuple((str(k), _bounded(_str(v), self.item_limit)) for k, v in raw.items())


def _bounded(text: str, limit: int | None) -> str:
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"
