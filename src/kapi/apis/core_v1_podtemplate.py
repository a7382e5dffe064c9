"""The pod template inside CronJob's job template, declared for its patch metadata.

kapi serves no Pod, but ``jobTemplate.spec.template`` is a ``PodTemplateSpec``,
and a strategic merge patch (``kubectl patch``, client-side ``kubectl apply``)
merges its containers, volumes and their lists on the merge keys that
``k8s.io/api/core/v1`` tags them with; replacing those lists instead would
drop the containers a patch does not name.  Only those lists, and the structs
on the way to them, are declared: each struct keeps its other fields as sent,
unpruned and unvalidated, like the free-form ``JobSpec`` around it.
"""

from __future__ import annotations

from kapi.runtime.meta import ObjectMeta
from kapi.runtime.schema import Field, List, Struct

_V1 = "io.k8s.api.core.v1"


def _struct(
    name: str, fields: tuple[Field, ...], description: str, *, map_type: str | None = None
) -> Struct:
    return Struct(
        f"{_V1}.{name}", fields, description, preserve_unknown_fields=True, map_type=map_type
    )


def _merging(items: Struct, *keys: str, strategy: str = "merge") -> List:
    """A list map merged on its first key (upstream's ``patchMergeKey``)."""
    return List(items, "map", keys, patch_strategy=strategy, patch_merge_key=keys[0])


#: The lists a Container and an EphemeralContainer share, with their merge keys.
_CONTAINER_LISTS = (
    Field(
        "env",
        _merging(_struct("EnvVar", (), "An environment variable of a container."), "name"),
        "Environment variables to set in the container.",
    ),
    Field(
        "ports",
        _merging(
            _struct("ContainerPort", (), "A network port of a container."),
            "containerPort",
            "protocol",
        ),
        "Ports to expose from the container.",
    ),
    Field(
        "volumeDevices",
        _merging(
            _struct("VolumeDevice", (), "A raw block device mapped into a container."),
            "devicePath",
        ),
        "Block devices the container uses.",
    ),
    Field(
        "volumeMounts",
        _merging(_struct("VolumeMount", (), "A volume mounted into a container."), "mountPath"),
        "Pod volumes to mount into the container's filesystem.",
    ),
)


Container = _struct("Container", _CONTAINER_LISTS, "A container to run in a pod.")
EphemeralContainer = _struct(
    "EphemeralContainer",
    _CONTAINER_LISTS,
    "A temporary container added to a running pod, e.g. for debugging.",
)

PodSpec = _struct(
    "PodSpec",
    (
        Field("containers", _merging(Container, "name"), "The containers of the pod."),
        Field(
            "ephemeralContainers",
            _merging(EphemeralContainer, "name"),
            "Ephemeral containers run in this pod.",
        ),
        Field(
            "hostAliases",
            _merging(
                _struct("HostAlias", (), "Hostnames resolved to an IP in the pod's hosts file."),
                "ip",
            ),
            "Entries added to the pod's hosts file.",
        ),
        Field(
            "imagePullSecrets",
            _merging(
                _struct(
                    "LocalObjectReference",
                    (),
                    "A reference to an object by name.",
                    map_type="atomic",
                ),
                "name",
            ),
            "Secrets in the pod's namespace used to pull its images.",
        ),
        Field(
            "initContainers",
            _merging(Container, "name"),
            "Containers run in order before the app containers start.",
        ),
        Field(
            "resourceClaims",
            _merging(
                _struct("PodResourceClaim", (), "A resource claim the pod uses."),
                "name",
                strategy="merge,retainKeys",
            ),
            "Resource claims the pod's containers may use.",
        ),
        Field(
            "schedulingGates",
            _merging(
                _struct("PodSchedulingGate", (), "A gate that holds the pod from scheduling."),
                "name",
            ),
            "Gates that must all be removed before the pod is scheduled.",
        ),
        Field(
            "topologySpreadConstraints",
            _merging(
                _struct("TopologySpreadConstraint", (), "How pods spread over a topology."),
                "topologyKey",
                "whenUnsatisfiable",
            ),
            "How the pod's replicas spread across topology domains.",
        ),
        Field(
            "volumes",
            _merging(
                _struct("Volume", (), "A named volume pod containers can mount."),
                "name",
                strategy="merge,retainKeys",
            ),
            "Volumes pod containers can mount.",
        ),
    ),
    "The specification of a pod.",
)

PodTemplateSpec = _struct(
    "PodTemplateSpec",
    (
        Field("metadata", ObjectMeta, "Standard object's metadata of the pods created."),
        Field("spec", PodSpec, "Specification of the desired behavior of the pod."),
    ),
    "The pods a workload creates are made from this template.",
)
