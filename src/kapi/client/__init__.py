"""kapi's API client: sync and async, resource-oriented, on plain JSON dicts.

>>> with Client.from_kubeconfig() as client:
...     configmaps = client.resource("v1", "configmaps")
...     configmaps.create({"metadata": {"name": "x"}, "data": {"k": "v"}})
"""

from kapi.client.config import ClientConfig
from kapi.client.errors import (
    AlreadyExistsError,
    ApiError,
    BadRequestError,
    ConflictError,
    ExpiredError,
    ForbiddenError,
    GoneError,
    InternalError,
    InvalidError,
    MethodNotAllowedError,
    NotAcceptableError,
    NotFoundError,
    RequestEntityTooLargeError,
    ServerTimeoutError,
    ServiceUnavailableError,
    TooManyRequestsError,
    UnauthorizedError,
    UnsupportedMediaTypeError,
    error_from_status,
)
from kapi.client.kubeconfig import (
    ContextNotFoundError,
    EmptyKubeconfigError,
    InvalidKubeconfigError,
    Kubeconfig,
    KubeconfigError,
    KubeconfigNotFoundError,
    kubeconfig_paths,
    load_kubeconfig,
    read_kubeconfig,
)
from kapi.client.request import Request, ResourceType, Response
from kapi.client.resource import Resource
from kapi.client.rest import AsyncClient, AsyncResource, Client, SyncResource
from kapi.client.warnings import (
    NoWarnings,
    WarningHandler,
    WarningHeader,
    WarningLogger,
    WarningWriter,
    get_default_warning_handler,
    set_default_warning_handler,
)
from kapi.client.watch import WatchEvent

__all__ = [
    "AlreadyExistsError",
    "ApiError",
    "AsyncClient",
    "AsyncResource",
    "BadRequestError",
    "Client",
    "ClientConfig",
    "ConflictError",
    "ContextNotFoundError",
    "EmptyKubeconfigError",
    "ExpiredError",
    "ForbiddenError",
    "GoneError",
    "InternalError",
    "InvalidError",
    "InvalidKubeconfigError",
    "Kubeconfig",
    "KubeconfigError",
    "KubeconfigNotFoundError",
    "MethodNotAllowedError",
    "NoWarnings",
    "NotAcceptableError",
    "NotFoundError",
    "Request",
    "RequestEntityTooLargeError",
    "Resource",
    "ResourceType",
    "Response",
    "ServerTimeoutError",
    "ServiceUnavailableError",
    "SyncResource",
    "TooManyRequestsError",
    "UnauthorizedError",
    "UnsupportedMediaTypeError",
    "WarningHandler",
    "WarningHeader",
    "WarningLogger",
    "WarningWriter",
    "WatchEvent",
    "error_from_status",
    "get_default_warning_handler",
    "kubeconfig_paths",
    "load_kubeconfig",
    "read_kubeconfig",
    "set_default_warning_handler",
]
