"""kube-openapi validation errors and their conversion to field errors.

The schema validator reports what kube-openapi's ``pkg/validation/errors``
would: a code, the failing value's *name* (a dotted path such as
``spec.items[0].name``, relative to the validated root) and a message that
embeds that name (``spec.replicas in body should be ...``). apiextensions'
``kubeOpenAPIResultToFieldErrors`` then turns each into a ``field.Error``:
the name becomes the field path (below the caller's path prefix), the code
picks the constructor. Both steps are reproduced here so that clients see
upstream's exact ``Status.details.causes``.

Errors are plain records built only on failure; the valid-document path of
the validator never touches this module.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import Enum, auto
from typing import Any, Final

from kapi.apimachinery.field_errors import (
    FieldError,
    invalid,
    not_supported,
    render_value,
    required,
    too_long,
    too_many,
    type_invalid,
)
from kapi.apimachinery.gotext import go_json, go_quote

IN_BODY: Final = "body"


class Code(Enum):
    """The kube-openapi error codes the conversion distinguishes."""

    COMPOSITE = auto()  # errors.New(...): not a *Validation, reported at the root path
    INVALID_TYPE = auto()
    REQUIRED = auto()
    TOO_LONG = auto()
    ENUM = auto()
    MAX_ITEMS = auto()
    TOO_MANY_PROPERTIES = auto()
    OTHER = auto()  # every other *Validation: field.Invalid(path, value, message)


class OpenAPIError:
    """One kube-openapi error: its code, name (path), bad value, message and limits."""

    __slots__ = ("code", "limit", "message", "name", "value", "values")

    def __init__(
        self,
        code: Code,
        name: str,
        message: str,
        value: Any = None,
        limit: int = -1,
        values: Sequence[Any] = (),
    ) -> None:
        self.code = code
        self.name = name
        self.message = message
        self.value = value
        self.limit = limit
        self.values = values

    def to_field_error(self, prefix: str) -> FieldError:
        """``kubeOpenAPIResultToFieldErrors`` for this error; ``prefix`` "" is the nil path."""
        if self.code is Code.COMPOSITE:
            return invalid(prefix or "<nil>", "", self.message)
        path = _error_path(prefix, self.name)
        value = "" if self.value is None else self.value
        match self.code:
            case Code.REQUIRED:
                return required(path, "")
            case Code.ENUM:
                return not_supported(path, self.value, [_enum_text(v) for v in self.values])
            case Code.TOO_LONG:
                return too_long(path, "", self.limit)
            case Code.MAX_ITEMS | Code.TOO_MANY_PROPERTIES:
                return too_many(path, self.value, self.limit)
            case Code.INVALID_TYPE:
                return type_invalid(path, value, self.message)
        return invalid(path, value, self.message)


def _error_path(prefix: str, name: str) -> str:
    """``fldPath.Child(strings.TrimPrefix(name, "."))`` unless the name is empty or "."."""
    if not name or name == ".":
        return prefix or "<nil>"
    name = name.removeprefix(".")
    return f"{prefix}.{name}" if prefix else name


def _enum_text(v: Any) -> str:
    """Allowed values as upstream lists them: strings as-is, the rest JSON-encoded."""
    return v if isinstance(v, str) else go_json(v)


def to_field_errors(errors: Iterable[OpenAPIError], prefix: str) -> list[FieldError]:
    """Converted errors, dropping repeats of a message as kube-openapi's ``Result`` does."""
    seen: set[str] = set()
    out: list[FieldError] = []
    for e in errors:
        if e.message not in seen:
            seen.add(e.message)
            out.append(e.to_field_error(prefix))
    return out


# --- constructors (errors.* in kube-openapi), message texts as upstream ---------------------


def invalid_type(name: str, type_name: str, value: str) -> OpenAPIError:
    """``errors.InvalidType`` with a string value (the only kind the validator passes)."""
    msg = f"{name} in {IN_BODY} must be of type {type_name}: {go_quote(value)}"
    return OpenAPIError(Code.INVALID_TYPE, name, msg, value)


def required_error(name: str) -> OpenAPIError:
    return OpenAPIError(Code.REQUIRED, name, f"{name} in {IN_BODY} is required")


def too_long_error(name: str, max_length: int, value: str) -> OpenAPIError:
    msg = f"{name} in {IN_BODY} should be at most {max_length} chars long"
    return OpenAPIError(Code.TOO_LONG, name, msg, value, max_length)


def too_short_error(name: str, min_length: int, value: str) -> OpenAPIError:
    msg = f"{name} in {IN_BODY} should be at least {min_length} chars long"
    return OpenAPIError(Code.OTHER, name, msg, value, min_length)


def pattern_error(name: str, pattern: str, value: str) -> OpenAPIError:
    return OpenAPIError(Code.OTHER, name, f"{name} in {IN_BODY} should match '{pattern}'", value)


def enum_error(name: str, value: Any, values: Sequence[Any]) -> OpenAPIError:
    # The message (Go's %v of the list) only serves de-duplication: clients see NotSupported.
    listed = " ".join(_enum_text(v) for v in values)
    msg = f"{name} in {IN_BODY} should be one of [{listed}]"
    return OpenAPIError(Code.ENUM, name, msg, value, values=values)


def multiple_of_error(name: str, factor: int | float, value: Any) -> OpenAPIError:
    msg = f"{name} in {IN_BODY} should be a multiple of {render_value(factor)}"
    return OpenAPIError(Code.OTHER, name, msg, value)


def multiple_of_not_positive(name: str, factor: int | float) -> OpenAPIError:
    msg = f"factor MultipleOf declared for {name} must be positive: {render_value(factor)}"
    return OpenAPIError(Code.OTHER, name, msg, factor)


def maximum_error(name: str, bound: int | float, exclusive: bool, value: Any) -> OpenAPIError:
    rel = "less than" if exclusive else "less than or equal to"
    msg = f"{name} in {IN_BODY} should be {rel} {render_value(bound)}"
    return OpenAPIError(Code.OTHER, name, msg, value)


def minimum_error(name: str, bound: int | float, exclusive: bool, value: Any) -> OpenAPIError:
    rel = "greater than" if exclusive else "greater than or equal to"
    msg = f"{name} in {IN_BODY} should be {rel} {render_value(bound)}"
    return OpenAPIError(Code.OTHER, name, msg, value)


def range_error(prefix: str, type_name: str, fmt: str, name: str) -> OpenAPIError:
    """``IsValueValidAgainstRange``'s plain error, reported at the root path by upstream."""
    kind = f"{type_name} with format {fmt}" if fmt else f"{type_name} (default format)"
    return OpenAPIError(Code.COMPOSITE, name, f"{prefix} value must be of type {kind} in {name}")


def too_few_items(name: str, min_items: int, size: int) -> OpenAPIError:
    msg = f"{name} in {IN_BODY} should have at least {min_items} items"
    return OpenAPIError(Code.OTHER, name, msg, size, min_items)


def too_many_items(name: str, max_items: int, size: int) -> OpenAPIError:
    msg = f"{name} in {IN_BODY} should have at most {max_items} items"
    return OpenAPIError(Code.MAX_ITEMS, name, msg, size, max_items)


def duplicate_items(name: str) -> OpenAPIError:
    return OpenAPIError(Code.OTHER, name, f"{name} in {IN_BODY} shouldn't contain duplicates")


def too_few_properties(name: str, min_props: int, size: int) -> OpenAPIError:
    msg = f"{name} in {IN_BODY} should have at least {min_props} properties"
    return OpenAPIError(Code.OTHER, name, msg, size, min_props)


def too_many_properties(name: str, max_props: int, size: int) -> OpenAPIError:
    msg = f"{name} in {IN_BODY} should have at most {max_props} properties"
    return OpenAPIError(Code.TOO_MANY_PROPERTIES, name, msg, size, max_props)


def property_not_allowed(name: str, key: str) -> OpenAPIError:
    """Reported at the object's path, with the key as the bad value."""
    msg = f"{name}.{key} in {IN_BODY} is a forbidden property"
    return OpenAPIError(Code.OTHER, name, msg, key)


def composite(message: str) -> OpenAPIError:
    return OpenAPIError(Code.COMPOSITE, "", message)


def any_of_failed(name: str) -> OpenAPIError:
    return composite(f"{go_quote(name)} must validate at least one schema (anyOf)")


def one_of_failed(name: str, valid: int) -> OpenAPIError:
    detail = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
    return composite(f"{go_quote(name)} must validate one and only one schema (oneOf). {detail}")


def all_of_failed(name: str, none_valid: bool) -> OpenAPIError:
    detail = ". None validated" if none_valid else ""
    return composite(f"{go_quote(name)} must validate all the schemas (allOf){detail}")


def not_failed(name: str) -> OpenAPIError:
    return composite(f"{go_quote(name)} must not validate the schema (not)")
