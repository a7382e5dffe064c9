"""Resource names and quantities as the quota, limit range and node rules see them.

Follows ``pkg/apis/core/helper`` (which names are standard, which count whole
units) and the parts of ``pkg/apis/core/validation`` every kind with a
``ResourceList`` shares: ``validateResourceName``, ``ValidateResourceQuantityValue``.
A ``resource.Quantity`` handed to ``field.Invalid`` as it is (not its text) prints
with Go's ``%#v``; :func:`go_quantity` renders that form.
"""

from __future__ import annotations

import re
from decimal import ROUND_CEILING
from typing import Any, Final

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import FieldError, GoSyntax, Path, invalid
from kapi.apimachinery.gotext import go_quote
from kapi.apimachinery.quantity import Format, Quantity, QuantityError, unmarshal_json

IS_NOT_INTEGER: Final = "must be an integer"
INVALID_QUOTA_RESOURCE: Final = "must be a standard resource for quota"

_COMPUTE = ("cpu", "memory", "ephemeral-storage")
_OBJECT_COUNTS = (
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
)
#: ``standardResources``: names a ResourceList may use unqualified.
STANDARD_RESOURCES: Final = frozenset(
    {
        *_COMPUTE,
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        *_OBJECT_COUNTS,
        "storage",
        "requests.storage",
    }
)
#: ``standardQuotaResources``: what the quota system tracks (``storage`` alone is not).
STANDARD_QUOTA_RESOURCES: Final = STANDARD_RESOURCES - {"storage"}
STANDARD_CONTAINER_RESOURCES: Final = frozenset(_COMPUTE)
#: ``integerResources``: counted in whole units.
INTEGER_RESOURCES: Final = frozenset(_OBJECT_COUNTS)


HUGEPAGES_PREFIX: Final = "hugepages-"


def is_huge_page_resource_name(name: str) -> bool:
    return name.startswith(HUGEPAGES_PREFIX)


def is_native_resource(name: str) -> bool:
    """A name without a domain, or in ``kubernetes.io``: Kubernetes' own resources."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource_name(name: str) -> bool:
    """A domain-qualified resource outside ``kubernetes.io`` (``example.com/gpu``)."""
    if is_native_resource(name) or name.startswith("requests."):
        return False
    return not validation.is_qualified_name("requests." + name)


def is_overcommit_allowed(name: str) -> bool:
    """Whether limits may exceed requests: for native resources other than huge pages."""
    return is_native_resource(name) and not is_huge_page_resource_name(name)


def is_quota_huge_page_resource_name(name: str) -> bool:
    """``IsQuotaHugePageResourceName``: ``hugepages-*`` or ``requests.hugepages-*``."""
    return name.startswith(HUGEPAGES_PREFIX) or name.startswith("requests." + HUGEPAGES_PREFIX)


def is_standard_resource_name(name: str) -> bool:
    return name in STANDARD_RESOURCES or is_quota_huge_page_resource_name(name)


def is_standard_quota_resource_name(name: str) -> bool:
    return name in STANDARD_QUOTA_RESOURCES or is_quota_huge_page_resource_name(name)


def is_integer_resource_name(name: str) -> bool:
    return name in INTEGER_RESOURCES or is_extended_resource_name(name)


def validate_resource_name(name: str, path: Path) -> list[FieldError]:
    """``validateResourceName``: qualified, and standard unless it has a prefix."""
    bad = GoSyntax(name)  # a core.ResourceName prints with its String(): unquoted
    errs = [invalid(path, bad, m) for m in validation.is_qualified_name(name)]
    if errs:
        return errs
    if "/" not in name and not is_standard_resource_name(name):
        errs.append(invalid(path, bad, "must be a standard resource type or fully qualified"))
    return errs


def validate_container_resource_name(name: str, path: Path) -> list[FieldError]:
    """``validateContainerResourceName``."""
    if name in _VALID_CONTAINER_RESOURCE_NAMES:
        return []
    return _container_resource_name_errors(name, path)


def _container_resource_name_errors(name: str, path: Path) -> list[FieldError]:
    errs = validate_resource_name(name, path)
    bad = GoSyntax(name)
    if "/" not in name:
        if name not in STANDARD_CONTAINER_RESOURCES and not is_huge_page_resource_name(name):
            errs.append(invalid(path, bad, "must be a standard resource for containers"))
    elif not is_native_resource(name) and not is_extended_resource_name(name):
        errs.append(invalid(path, bad, "doesn't follow extended resource name standard"))
    return errs


#: The names almost every container's resources use (cpu, memory...), checked once here:
#: the checks above pass them, and every pod template names them on every write.
_VALID_CONTAINER_RESOURCE_NAMES: Final = frozenset(
    name
    for name in STANDARD_CONTAINER_RESOURCES
    if not _container_resource_name_errors(name, Path("_"))
)


def validate_quota_resource_name(name: str, path: Path) -> list[FieldError]:
    """``ValidateResourceQuotaResourceName``."""
    errs = validate_resource_name(name, path)
    if "/" not in name and not is_standard_quota_resource_name(name):
        errs.append(invalid(path, GoSyntax(name), INVALID_QUOTA_RESOURCE))
    return errs


def quantity_of(value: Any) -> Quantity | None:
    """A stored quantity (already checked when decoded); ``None`` if it is none."""
    try:
        return unmarshal_json(value)
    except QuantityError:
        return None


def milli_value(q: Quantity) -> int:
    """``MilliValue``: thousandths, rounded up."""
    return int((q.amount * 1000).to_integral_value(rounding=ROUND_CEILING))


def validate_quantity_value(name: str, value: Any, path: Path) -> list[FieldError]:
    """``ValidateResourceQuantityValue``: not negative, and whole for integer resources."""
    q = quantity_of(value)
    if q is None:
        return []
    errs: list[FieldError] = []
    if q.amount < 0:
        errs.append(invalid(path, str(q), validation.IS_NEGATIVE_ERROR_MSG))
    if is_integer_resource_name(name) and milli_value(q) % 1000 != 0:
        errs.append(invalid(path, go_quantity(q), IS_NOT_INTEGER))
    return errs


# --- %#v of a resource.Quantity ------------------------------------------------------------------

_NUMBER = re.compile(r"^([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)$")
_DECIMAL_SUFFIX = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIX = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}


def _int64_amount(text: str) -> tuple[int, int] | None:
    """The ``int64Amount`` upstream's parser keeps for ``text`` (its fast path), if any."""
    match = _NUMBER.match(text.strip())
    if match is None:
        return None
    sign, num, denom, suffix = match.group(1), match.group(2), match.group(3) or "", match.group(4)
    num = num or "0"
    if suffix in _BINARY_SUFFIX:
        exponent = _BINARY_SUFFIX[suffix]
        if denom or 15 - len(num) - int(exponent * 3 / 10) - 1 < 0:
            return None
        value = int(num) << exponent
        scale = 0
    else:
        if suffix in _DECIMAL_SUFFIX:
            exponent = _DECIMAL_SUFFIX[suffix]
        elif suffix[:1] in ("e", "E") and re.fullmatch(r"[-+]?[0-9]+", suffix[1:]):
            exponent = int(suffix[1:])
        else:
            return None
        if 18 - len(num + denom) < 0:
            return None
        scale = exponent - len(denom)
        if scale < -9:
            return None
        value = int(num + denom)
    if value >= 1 << 63:
        return None
    return (-value if sign == "-" else value), scale


def go_quantity(q: Quantity, text: str | None = None) -> GoSyntax:
    """``%#v`` of a decoded ``resource.Quantity``: its int64 amount, its kept text, its format.

    Values upstream holds as an ``inf.Dec`` print a pointer address there; kapi prints
    the amount it would hold as an int64 instead.
    """
    source = text if text is not None else str(q)
    amount = _int64_amount(source)
    if amount is None:
        value, scale = int(q.amount), 0
    else:
        value, scale = amount
    kept = q.text or ""
    fmt = q.format.value if q.format is not Format.DECIMAL_EXPONENT else "DecimalExponent"
    return GoSyntax(
        f"resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:{scale}}}, "
        f"d:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:{go_quote(kept)}, "
        f"Format:{go_quote(fmt)}}}"
    )


def go_string_slice(type_name: str, values: list[str]) -> GoSyntax:
    """``%#v`` of a slice of a string type: ``[]string{"a", "b"}``."""
    return GoSyntax(f"[]{type_name}{{" + ", ".join(go_quote(v) for v in values) + "}")
