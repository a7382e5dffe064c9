"""KEP-2558 field lifecycle tags, as a value declared on a schema field.

Upstream's KEP puts a comment line such as
``+lifecycle:kubernetes:minVersion=v1.30,status=beta,featureGate=JobManagedBy``
above a Go struct field.  kapi declares its kinds in Python, so a tag here is a
:class:`FieldLifecycle` value passed to ``Field(lifecycle=(...,))`` rather than a
comment the schema builder would have to find by re-reading the source file.

Why a declaration argument and not a comment:

* the schema builder, the OpenAPI documents and the linter all read the same
  object, with no second parser over Python source that could drift from it;
* a typo in a key is a ``TypeError`` at import time, not a silently ignored line;
* it still prints (``str()``) as the KEP's exact tag text and parses back from it
  (:func:`parse`), so documentation, linter messages and reviewers see the KEP
  syntax.

A field may carry several tags, one per component (``kubernetes``, ``istio``...).
This module only models and checks the syntax; whether a tag agrees with the
gate's history is the linter's business.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from kapi.features import KNOWN_FEATURES, Stage, spec_at
from kapi.version import DEFAULT_VERSION, Version

#: The OpenAPI extension a tagged field's schema carries.
EXTENSION = "x-kubernetes-api-lifecycle"
#: Release form the KEP allows in ``minVersion`` for the ``kubernetes`` component.
MIN_VERSION = re.compile(r"v[1-9][0-9]*\.(0|[1-9][0-9]*)")
#: Stages a tag may name; a GA field carries no tag at all.
STATUSES = ("alpha", "beta", "deprecated")

#: A component's release in ``minVersion`` elsewhere (``v3.0.0``, as the KEP's istio example).
COMPONENT_MIN_VERSION = re.compile(r"v(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*)){1,2}")
#: A component's name: ``kubernetes``, or a project's DNS-style name (``example.com``).
COMPONENT = re.compile(r"[a-z0-9]([a-z0-9.-]*[a-z0-9])?")
#: The keys a tag may set, in the order it prints them.
KEYS = ("minVersion", "status", "featureGate")

_PREFIX = "+lifecycle:"


class LifecycleSyntaxError(ValueError):
    """A ``+lifecycle:`` tag text that does not follow the KEP's grammar."""


@dataclass(frozen=True)
class FieldLifecycle:
    """One component's lifecycle of a field (one ``+lifecycle:`` line)."""

    min_version: str
    status: str | None = None
    feature_gate: str | None = None
    component: str = "kubernetes"

    def __str__(self) -> str:
        parts = [f"minVersion={self.min_version}"]
        if self.status is not None:
            parts.append(f"status={self.status}")
        if self.feature_gate is not None:
            parts.append(f"featureGate={self.feature_gate}")
        return f"{_PREFIX}{self.component}:{','.join(parts)}"

    def extension(self) -> dict[str, str]:
        """This tag's entry under the component in ``x-kubernetes-api-lifecycle``."""
        out = {"minVersion": self.min_version}
        if self.status is not None:
            out["status"] = self.status
        if self.feature_gate is not None:
            out["featureGate"] = self.feature_gate
        return out


def parse(text: str) -> FieldLifecycle:
    """The tag a ``+lifecycle:<component>:k=v,...`` line declares.

    Raises :class:`LifecycleSyntaxError` for a missing prefix or component, an
    unknown, repeated or empty key, or a missing ``minVersion``.  Values are not
    judged here beyond being non-empty (the linter checks them).
    """
    line = text.strip()
    if not line.startswith(_PREFIX):
        raise LifecycleSyntaxError(f"{text!r}: a lifecycle tag starts with {_PREFIX!r}")
    component, sep, body = line[len(_PREFIX) :].partition(":")
    if not sep or not COMPONENT.fullmatch(component):
        raise LifecycleSyntaxError(f"{text!r}: expected +lifecycle:<component>:<key>=<value>,...")
    values: dict[str, str] = {}
    for item in body.split(","):
        key, eq, value = item.partition("=")
        if not eq or not value:
            raise LifecycleSyntaxError(f"{text!r}: {item!r} is not <key>=<value>")
        if key not in KEYS:
            expected = ", ".join(KEYS)
            raise LifecycleSyntaxError(f"{text!r}: unknown key {key!r} (expected {expected})")
        if key in values:
            raise LifecycleSyntaxError(f"{text!r}: key {key!r} given twice")
        values[key] = value
    if "minVersion" not in values:
        raise LifecycleSyntaxError(f"{text!r}: minVersion is required")
    return FieldLifecycle(
        min_version=values["minVersion"],
        status=values.get("status"),
        feature_gate=values.get("featureGate"),
        component=component,
    )


def at_version(tag: FieldLifecycle, version: Version) -> FieldLifecycle | None:
    """``tag`` as a server emulating release ``version`` publishes it, or ``None``.

    A ``kubernetes`` tag with a gate kapi knows follows the gate's stage in that
    release: nothing before the field existed (before ``minVersion`` or while the
    gate was not yet introduced) and nothing once the gate is GA; ``alpha`` or
    ``beta`` in between.  Other components' tags, a ``deprecated`` tag, and tags
    naming an unknown gate (the linter reports those) are published as declared.
    """
    if tag.component != "kubernetes" or tag.feature_gate not in KNOWN_FEATURES:
        return tag
    if MIN_VERSION.fullmatch(tag.min_version) and Version.parse(tag.min_version) > version:
        return None
    stage = spec_at(tag.feature_gate, version).stage
    if stage in (Stage.PRE_ALPHA, Stage.GA):
        return None
    # A field deprecated on its own stays so; one deprecated because its gate is
    # follows the gate's earlier stages.
    own = spec_at(tag.feature_gate, DEFAULT_VERSION).stage is not Stage.DEPRECATED
    if tag.status == "deprecated" and own:
        return tag
    return replace(tag, status=stage.value.lower())


def with_gate(tags: tuple[FieldLifecycle, ...], gate: str | None) -> tuple[FieldLifecycle, ...]:
    """``tags`` of a field guarded by ``gate``, plus a stand-in tag for the gate if none names it.

    A field whose gate is GA at the release kapi models carries no tag, yet a server
    emulating an older release must publish and enforce the stage the gate had then.
    The stand-in has the gate's first release and no status: :func:`at_version` gives
    it the stage of the release it is resolved at (nothing where the gate is GA).
    """
    if gate is None or gate not in KNOWN_FEATURES:
        return tags
    if any(t.component == "kubernetes" and t.feature_gate == gate for t in tags):
        return tags
    first = next((s.since for s in KNOWN_FEATURES[gate] if s.stage is not Stage.PRE_ALPHA), None)
    if first is None:
        return tags
    return (*tags, FieldLifecycle(f"v{first}", None, gate))


def extension(
    tags: tuple[FieldLifecycle, ...], version: Version | None = None
) -> dict[str, dict[str, str]]:
    """The ``x-kubernetes-api-lifecycle`` value for a field's tags, keyed by component.

    With ``version``, each tag is first resolved at that release (:func:`at_version`);
    the result is empty when no tag applies there.
    """
    out: dict[str, dict[str, str]] = {}
    for tag in tags:
        resolved = tag if version is None else at_version(tag, version)
        if resolved is not None:
            out[resolved.component] = resolved.extension()
    return out


def note(description: str, extension_value: dict[str, Any]) -> str:
    """``description`` with a sentence per component saying the field's lifecycle.

    ``kubectl explain`` shows descriptions but not extensions, so the published
    description carries the stage too: ``Lifecycle (kubernetes): alpha, feature
    gate CoordinatedLeaderElection, field since v1.31.``
    """
    sentences = []
    for component, tag in extension_value.items():
        if not isinstance(tag, dict):
            continue  # a CRD stored before its tags were checked: say nothing of it
        parts = [tag["status"]] if tag.get("status") else []
        if tag.get("featureGate"):
            parts.append(f"feature gate {tag['featureGate']}")
        if tag.get("minVersion"):
            parts.append(f"field since {tag['minVersion']}")
        if parts:
            sentences.append(f"Lifecycle ({component}): {', '.join(map(str, parts))}.")
    return " ".join(filter(None, (description, *sentences)))
