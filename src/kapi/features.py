"""Feature gates, parsed from ``--feature-gates`` as kube-apiserver does."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Stage(Enum):
    ALPHA = "ALPHA"
    BETA = "BETA"
    GA = "GA"
    DEPRECATED = "DEPRECATED"


@dataclass(frozen=True)
class FeatureSpec:
    default: bool
    stage: Stage
    #: GA gates are locked to their default: setting them otherwise is an error.
    locked: bool = False


#: Known gates with the stage and default of the newest upstream release kapi models.
KNOWN_FEATURES: dict[str, FeatureSpec] = {
    "WarningHeaders": FeatureSpec(True, Stage.GA, locked=True),
    "APIServerIdentity": FeatureSpec(True, Stage.BETA),
    "StorageVersionAPI": FeatureSpec(False, Stage.ALPHA),
    "CRDValidationRatcheting": FeatureSpec(True, Stage.GA, locked=True),
    "CustomResourceFieldSelectors": FeatureSpec(True, Stage.GA, locked=True),
}


class FeatureGate:
    """The set of enabled features for one server."""

    def __init__(self, overrides: dict[str, bool] | None = None) -> None:
        self._enabled = {name: spec.default for name, spec in KNOWN_FEATURES.items()}
        for name, value in (overrides or {}).items():
            self.set(name, value)

    def set(self, name: str, value: bool) -> None:
        spec = KNOWN_FEATURES.get(name)
        if spec is None:
            raise ValueError(f"unrecognized feature gate: {name}")
        if spec.locked and value != spec.default:
            raise ValueError(
                f"cannot set feature gate {name} to {str(value).lower()}, "
                f"feature is locked to {str(spec.default).lower()}"
            )
        self._enabled[name] = value

    def enabled(self, name: str) -> bool:
        return self._enabled[name]

    @classmethod
    def parse(cls, text: str) -> FeatureGate:
        """Parse ``Name=true,Other=false`` (the ``--feature-gates`` syntax)."""
        overrides: dict[str, bool] = {}
        for item in filter(None, (part.strip() for part in text.split(","))):
            name, sep, raw = item.partition("=")
            if not sep or raw.lower() not in ("true", "false"):
                raise ValueError(
                    f"missing bool value for {name}"
                    if not sep
                    else f"invalid value of {name}={raw}, err: strconv.ParseBool: "
                    f'parsing "{raw}": invalid syntax'
                )
            overrides[name.strip()] = raw.lower() == "true"
        return cls(overrides)
