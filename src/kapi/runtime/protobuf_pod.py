"""Field tables of ``k8s.io/api/core/v1``'s pod template, for the kinds that embed one.

A CronJob carries a ``PodTemplateSpec`` in its job template, and a client may
set any field of the ``PodSpec`` in it, so the whole tree is tabled here:
volumes and their sources, containers (ports, env, resources, probes,
lifecycle hooks, security contexts), ephemeral containers, affinity,
tolerations, topology spread constraints, DNS, resource claims.  Numbers are
those of the ``generated.proto`` of ``k8s.io/api`` v0.37.0-beta.0; whether a
field is a pointer and whether its JSON tag has ``omitempty`` are read off the
Go structs of its ``types.go``, as :mod:`kapi.runtime.protobuf_messages`
explains.  An embedded struct (``LocalObjectReference`` in the key selectors,
``VolumeSource`` in ``Volume``, ``ProbeHandler`` in ``Probe``) is inline.

No kind is registered here: :mod:`kapi.runtime.protobuf_batch` serves the
kinds whose template this is.
"""

from __future__ import annotations

from kapi.runtime.protobuf_messages import (
    BOOL,
    INT32,
    INT64,
    INT_OR_STRING,
    LABEL_SELECTOR,
    OBJECT_META,
    QUANTITY,
    STRING,
    TYPED_LOCAL_OBJECT_REFERENCE,
    Field,
    inline,
    map_of,
    message,
    omitempty,
    pointer,
    repeated,
    required,
)

_CORE = "k8s.io.api.core.v1."


def _core(name: str, *fields: Field) -> str:
    return message(_CORE + name, *fields)


def _alike(names: tuple[str, ...], *fields: Field) -> tuple[str, ...]:
    """Messages that upstream declares with the same fields under the same numbers."""
    return tuple(_core(name, *fields) for name in names)


LOCAL_OBJECT_REFERENCE = _core("LocalObjectReference", omitempty(1, "name", STRING))
KEY_TO_PATH = _core(
    "KeyToPath",
    required(1, "key", STRING),
    required(2, "path", STRING),
    pointer(3, "mode", INT32),
)
OBJECT_FIELD_SELECTOR = _core(
    "ObjectFieldSelector",
    omitempty(1, "apiVersion", STRING),
    required(2, "fieldPath", STRING),
)
RESOURCE_FIELD_SELECTOR = _core(
    "ResourceFieldSelector",
    omitempty(1, "containerName", STRING),
    required(2, "resource", STRING),
    # Not a pointer: a struct, so ``omitempty`` keeps it, as "0" when unset.
    omitempty(3, "divisor", QUANTITY),
)
VOLUME_RESOURCE_REQUIREMENTS = _core(
    "VolumeResourceRequirements",
    map_of(1, "limits", QUANTITY),
    map_of(2, "requests", QUANTITY),
)
RESOURCE_REQUIREMENTS = _core(
    "ResourceRequirements",
    map_of(1, "limits", QUANTITY),
    map_of(2, "requests", QUANTITY),
    repeated(
        3,
        "claims",
        _core("ResourceClaim", required(1, "name", STRING), omitempty(2, "request", STRING)),
    ),
)

# --- volumes ---------------------------------------------------------------------------------

DOWNWARD_API_VOLUME_FILE = _core(
    "DownwardAPIVolumeFile",
    required(1, "path", STRING),
    pointer(2, "fieldRef", OBJECT_FIELD_SELECTOR),
    pointer(3, "resourceFieldRef", RESOURCE_FIELD_SELECTOR),
    pointer(4, "mode", INT32),
)
SECRET_PROJECTION, CONFIG_MAP_PROJECTION = _alike(
    ("SecretProjection", "ConfigMapProjection"),
    inline(1, LOCAL_OBJECT_REFERENCE),
    repeated(2, "items", KEY_TO_PATH),
    pointer(4, "optional", BOOL),
)
VOLUME_PROJECTION = _core(
    "VolumeProjection",
    pointer(1, "secret", SECRET_PROJECTION),
    pointer(
        2,
        "downwardAPI",
        _core("DownwardAPIProjection", repeated(1, "items", DOWNWARD_API_VOLUME_FILE)),
    ),
    pointer(3, "configMap", CONFIG_MAP_PROJECTION),
    pointer(
        4,
        "serviceAccountToken",
        _core(
            "ServiceAccountTokenProjection",
            omitempty(1, "audience", STRING),
            pointer(2, "expirationSeconds", INT64),
            required(3, "path", STRING),
        ),
    ),
    pointer(
        5,
        "clusterTrustBundle",
        _core(
            "ClusterTrustBundleProjection",
            pointer(1, "name", STRING),
            pointer(2, "signerName", STRING),
            pointer(3, "labelSelector", LABEL_SELECTOR),
            required(4, "path", STRING),
            pointer(5, "optional", BOOL),
        ),
    ),
    pointer(
        6,
        "podCertificate",
        _core(
            "PodCertificateProjection",
            omitempty(1, "signerName", STRING),
            omitempty(2, "keyType", STRING),
            pointer(3, "maxExpirationSeconds", INT32),
            omitempty(4, "credentialBundlePath", STRING),
            omitempty(5, "keyPath", STRING),
            omitempty(6, "certificateChainPath", STRING),
            map_of(7, "userAnnotations", STRING),
        ),
    ),
)
PERSISTENT_VOLUME_CLAIM_SPEC = _core(
    "PersistentVolumeClaimSpec",
    repeated(1, "accessModes", STRING),
    omitempty(2, "resources", VOLUME_RESOURCE_REQUIREMENTS),
    omitempty(3, "volumeName", STRING),
    pointer(4, "selector", LABEL_SELECTOR),
    pointer(5, "storageClassName", STRING),
    pointer(6, "volumeMode", STRING),
    pointer(7, "dataSource", TYPED_LOCAL_OBJECT_REFERENCE),
    pointer(
        8,
        "dataSourceRef",
        _core(
            "TypedObjectReference",
            pointer(1, "apiGroup", STRING),
            required(2, "kind", STRING),
            required(3, "name", STRING),
            pointer(4, "namespace", STRING),
        ),
    ),
    pointer(9, "volumeAttributesClassName", STRING),
)
PERSISTENT_VOLUME_CLAIM_TEMPLATE = _core(
    "PersistentVolumeClaimTemplate",
    omitempty(1, "metadata", OBJECT_META),
    required(2, "spec", PERSISTENT_VOLUME_CLAIM_SPEC),
)
#: ``VolumeSource``'s members, one per volume plugin, all pointers: a volume sets one.
VOLUME_SOURCE = _core(
    "VolumeSource",
    pointer(
        1,
        "hostPath",
        _core("HostPathVolumeSource", required(1, "path", STRING), pointer(2, "type", STRING)),
    ),
    pointer(
        2,
        "emptyDir",
        _core(
            "EmptyDirVolumeSource",
            omitempty(1, "medium", STRING),
            pointer(2, "sizeLimit", QUANTITY),
        ),
    ),
    pointer(
        3,
        "gcePersistentDisk",
        _core(
            "GCEPersistentDiskVolumeSource",
            required(1, "pdName", STRING),
            omitempty(2, "fsType", STRING),
            omitempty(3, "partition", INT32),
            omitempty(4, "readOnly", BOOL),
        ),
    ),
    pointer(
        4,
        "awsElasticBlockStore",
        _core(
            "AWSElasticBlockStoreVolumeSource",
            required(1, "volumeID", STRING),
            omitempty(2, "fsType", STRING),
            omitempty(3, "partition", INT32),
            omitempty(4, "readOnly", BOOL),
        ),
    ),
    pointer(
        5,
        "gitRepo",
        _core(
            "GitRepoVolumeSource",
            required(1, "repository", STRING),
            omitempty(2, "revision", STRING),
            omitempty(3, "directory", STRING),
        ),
    ),
    pointer(
        6,
        "secret",
        _core(
            "SecretVolumeSource",
            omitempty(1, "secretName", STRING),
            repeated(2, "items", KEY_TO_PATH),
            pointer(3, "defaultMode", INT32),
            pointer(4, "optional", BOOL),
        ),
    ),
    pointer(
        7,
        "nfs",
        _core(
            "NFSVolumeSource",
            required(1, "server", STRING),
            required(2, "path", STRING),
            omitempty(3, "readOnly", BOOL),
        ),
    ),
    pointer(
        8,
        "iscsi",
        _core(
            "ISCSIVolumeSource",
            required(1, "targetPortal", STRING),
            required(2, "iqn", STRING),
            required(3, "lun", INT32),
            omitempty(4, "iscsiInterface", STRING),
            omitempty(5, "fsType", STRING),
            omitempty(6, "readOnly", BOOL),
            repeated(7, "portals", STRING),
            omitempty(8, "chapAuthDiscovery", BOOL),
            pointer(10, "secretRef", LOCAL_OBJECT_REFERENCE),
            omitempty(11, "chapAuthSession", BOOL),
            pointer(12, "initiatorName", STRING),
        ),
    ),
    pointer(
        9,
        "glusterfs",
        _core(
            "GlusterfsVolumeSource",
            required(1, "endpoints", STRING),
            required(2, "path", STRING),
            omitempty(3, "readOnly", BOOL),
        ),
    ),
    pointer(
        10,
        "persistentVolumeClaim",
        _core(
            "PersistentVolumeClaimVolumeSource",
            required(1, "claimName", STRING),
            omitempty(2, "readOnly", BOOL),
        ),
    ),
    pointer(
        11,
        "rbd",
        _core(
            "RBDVolumeSource",
            repeated(1, "monitors", STRING),
            required(2, "image", STRING),
            omitempty(3, "fsType", STRING),
            omitempty(4, "pool", STRING),
            omitempty(5, "user", STRING),
            omitempty(6, "keyring", STRING),
            pointer(7, "secretRef", LOCAL_OBJECT_REFERENCE),
            omitempty(8, "readOnly", BOOL),
        ),
    ),
    pointer(
        12,
        "flexVolume",
        _core(
            "FlexVolumeSource",
            required(1, "driver", STRING),
            omitempty(2, "fsType", STRING),
            pointer(3, "secretRef", LOCAL_OBJECT_REFERENCE),
            omitempty(4, "readOnly", BOOL),
            map_of(5, "options", STRING),
        ),
    ),
    pointer(
        13,
        "cinder",
        _core(
            "CinderVolumeSource",
            required(1, "volumeID", STRING),
            omitempty(2, "fsType", STRING),
            omitempty(3, "readOnly", BOOL),
            pointer(4, "secretRef", LOCAL_OBJECT_REFERENCE),
        ),
    ),
    pointer(
        14,
        "cephfs",
        _core(
            "CephFSVolumeSource",
            repeated(1, "monitors", STRING),
            omitempty(2, "path", STRING),
            omitempty(3, "user", STRING),
            omitempty(4, "secretFile", STRING),
            pointer(5, "secretRef", LOCAL_OBJECT_REFERENCE),
            omitempty(6, "readOnly", BOOL),
        ),
    ),
    pointer(
        15,
        "flocker",
        _core(
            "FlockerVolumeSource",
            omitempty(1, "datasetName", STRING),
            omitempty(2, "datasetUUID", STRING),
        ),
    ),
    pointer(
        16,
        "downwardAPI",
        _core(
            "DownwardAPIVolumeSource",
            repeated(1, "items", DOWNWARD_API_VOLUME_FILE),
            pointer(2, "defaultMode", INT32),
        ),
    ),
    pointer(
        17,
        "fc",
        _core(
            "FCVolumeSource",
            repeated(1, "targetWWNs", STRING),
            pointer(2, "lun", INT32),
            omitempty(3, "fsType", STRING),
            omitempty(4, "readOnly", BOOL),
            repeated(5, "wwids", STRING),
        ),
    ),
    pointer(
        18,
        "azureFile",
        _core(
            "AzureFileVolumeSource",
            required(1, "secretName", STRING),
            required(2, "shareName", STRING),
            omitempty(3, "readOnly", BOOL),
        ),
    ),
    pointer(
        19,
        "configMap",
        _core(
            "ConfigMapVolumeSource",
            inline(1, LOCAL_OBJECT_REFERENCE),
            repeated(2, "items", KEY_TO_PATH),
            pointer(3, "defaultMode", INT32),
            pointer(4, "optional", BOOL),
        ),
    ),
    pointer(
        20,
        "vsphereVolume",
        _core(
            "VsphereVirtualDiskVolumeSource",
            required(1, "volumePath", STRING),
            omitempty(2, "fsType", STRING),
            omitempty(3, "storagePolicyName", STRING),
            omitempty(4, "storagePolicyID", STRING),
        ),
    ),
    pointer(
        21,
        "quobyte",
        _core(
            "QuobyteVolumeSource",
            required(1, "registry", STRING),
            required(2, "volume", STRING),
            omitempty(3, "readOnly", BOOL),
            omitempty(4, "user", STRING),
            omitempty(5, "group", STRING),
            omitempty(6, "tenant", STRING),
        ),
    ),
    pointer(
        22,
        "azureDisk",
        _core(
            "AzureDiskVolumeSource",
            required(1, "diskName", STRING),
            required(2, "diskURI", STRING),
            pointer(3, "cachingMode", STRING),
            pointer(4, "fsType", STRING),
            pointer(5, "readOnly", BOOL),
            pointer(6, "kind", STRING),
        ),
    ),
    pointer(
        23,
        "photonPersistentDisk",
        _core(
            "PhotonPersistentDiskVolumeSource",
            required(1, "pdID", STRING),
            omitempty(2, "fsType", STRING),
        ),
    ),
    pointer(
        24,
        "portworxVolume",
        _core(
            "PortworxVolumeSource",
            required(1, "volumeID", STRING),
            omitempty(2, "fsType", STRING),
            omitempty(3, "readOnly", BOOL),
        ),
    ),
    pointer(
        25,
        "scaleIO",
        _core(
            "ScaleIOVolumeSource",
            required(1, "gateway", STRING),
            required(2, "system", STRING),
            pointer(3, "secretRef", LOCAL_OBJECT_REFERENCE),
            omitempty(4, "sslEnabled", BOOL),
            omitempty(5, "protectionDomain", STRING),
            omitempty(6, "storagePool", STRING),
            omitempty(7, "storageMode", STRING),
            omitempty(8, "volumeName", STRING),
            omitempty(9, "fsType", STRING),
            omitempty(10, "readOnly", BOOL),
        ),
    ),
    pointer(
        26,
        "projected",
        _core(
            "ProjectedVolumeSource",
            repeated(1, "sources", VOLUME_PROJECTION),
            pointer(2, "defaultMode", INT32),
        ),
    ),
    pointer(
        27,
        "storageos",
        _core(
            "StorageOSVolumeSource",
            omitempty(1, "volumeName", STRING),
            omitempty(2, "volumeNamespace", STRING),
            omitempty(3, "fsType", STRING),
            omitempty(4, "readOnly", BOOL),
            pointer(5, "secretRef", LOCAL_OBJECT_REFERENCE),
        ),
    ),
    pointer(
        28,
        "csi",
        _core(
            "CSIVolumeSource",
            required(1, "driver", STRING),
            pointer(2, "readOnly", BOOL),
            pointer(3, "fsType", STRING),
            map_of(4, "volumeAttributes", STRING),
            pointer(5, "nodePublishSecretRef", LOCAL_OBJECT_REFERENCE),
        ),
    ),
    pointer(
        29,
        "ephemeral",
        _core(
            "EphemeralVolumeSource",
            pointer(1, "volumeClaimTemplate", PERSISTENT_VOLUME_CLAIM_TEMPLATE),
        ),
    ),
    pointer(
        30,
        "image",
        _core(
            "ImageVolumeSource",
            omitempty(1, "reference", STRING),
            omitempty(2, "pullPolicy", STRING),
        ),
    ),
)
VOLUME = _core("Volume", required(1, "name", STRING), inline(2, VOLUME_SOURCE))

# --- containers ------------------------------------------------------------------------------

CONFIG_MAP_ENV_SOURCE, SECRET_ENV_SOURCE = _alike(
    ("ConfigMapEnvSource", "SecretEnvSource"),
    inline(1, LOCAL_OBJECT_REFERENCE),
    pointer(2, "optional", BOOL),
)
CONFIG_MAP_KEY_SELECTOR, SECRET_KEY_SELECTOR = _alike(
    ("ConfigMapKeySelector", "SecretKeySelector"),
    inline(1, LOCAL_OBJECT_REFERENCE),
    required(2, "key", STRING),
    pointer(3, "optional", BOOL),
)
ENV_VAR = _core(
    "EnvVar",
    required(1, "name", STRING),
    omitempty(2, "value", STRING),
    pointer(
        3,
        "valueFrom",
        _core(
            "EnvVarSource",
            pointer(1, "fieldRef", OBJECT_FIELD_SELECTOR),
            pointer(2, "resourceFieldRef", RESOURCE_FIELD_SELECTOR),
            pointer(3, "configMapKeyRef", CONFIG_MAP_KEY_SELECTOR),
            pointer(4, "secretKeyRef", SECRET_KEY_SELECTOR),
            pointer(
                5,
                "fileKeyRef",
                _core(
                    "FileKeySelector",
                    required(1, "volumeName", STRING),
                    required(2, "path", STRING),
                    required(3, "key", STRING),
                    pointer(4, "optional", BOOL),
                ),
            ),
        ),
    ),
)
ENV_FROM_SOURCE = _core(
    "EnvFromSource",
    omitempty(1, "prefix", STRING),
    pointer(2, "configMapRef", CONFIG_MAP_ENV_SOURCE),
    pointer(3, "secretRef", SECRET_ENV_SOURCE),
)
CONTAINER_PORT = _core(
    "ContainerPort",
    omitempty(1, "name", STRING),
    omitempty(2, "hostPort", INT32),
    required(3, "containerPort", INT32),
    omitempty(4, "protocol", STRING),
    omitempty(5, "hostIP", STRING),
)
VOLUME_MOUNT = _core(
    "VolumeMount",
    required(1, "name", STRING),
    omitempty(2, "readOnly", BOOL),
    required(3, "mountPath", STRING),
    omitempty(4, "subPath", STRING),
    pointer(5, "mountPropagation", STRING),
    omitempty(6, "subPathExpr", STRING),
    pointer(7, "recursiveReadOnly", STRING),
)
EXEC_ACTION = _core("ExecAction", repeated(1, "command", STRING))
HTTP_GET_ACTION = _core(
    "HTTPGetAction",
    omitempty(1, "path", STRING),
    required(2, "port", INT_OR_STRING),
    omitempty(3, "host", STRING),
    omitempty(4, "scheme", STRING),
    repeated(
        5,
        "httpHeaders",
        _core("HTTPHeader", required(1, "name", STRING), required(2, "value", STRING)),
    ),
)
TCP_SOCKET_ACTION = _core(
    "TCPSocketAction", required(1, "port", INT_OR_STRING), omitempty(2, "host", STRING)
)
PROBE = _core(
    "Probe",
    inline(
        1,
        _core(
            "ProbeHandler",
            pointer(1, "exec", EXEC_ACTION),
            pointer(2, "httpGet", HTTP_GET_ACTION),
            pointer(3, "tcpSocket", TCP_SOCKET_ACTION),
            pointer(
                4,
                "grpc",
                _core("GRPCAction", required(1, "port", INT32), pointer(2, "service", STRING)),
            ),
        ),
    ),
    omitempty(2, "initialDelaySeconds", INT32),
    omitempty(3, "timeoutSeconds", INT32),
    omitempty(4, "periodSeconds", INT32),
    omitempty(5, "successThreshold", INT32),
    omitempty(6, "failureThreshold", INT32),
    pointer(7, "terminationGracePeriodSeconds", INT64),
)
LIFECYCLE_HANDLER = _core(
    "LifecycleHandler",
    pointer(1, "exec", EXEC_ACTION),
    pointer(2, "httpGet", HTTP_GET_ACTION),
    pointer(3, "tcpSocket", TCP_SOCKET_ACTION),
    pointer(4, "sleep", _core("SleepAction", required(1, "seconds", INT64))),
)
LIFECYCLE = _core(
    "Lifecycle",
    pointer(1, "postStart", LIFECYCLE_HANDLER),
    pointer(2, "preStop", LIFECYCLE_HANDLER),
    pointer(3, "stopSignal", STRING),
)
SE_LINUX_OPTIONS = _core(
    "SELinuxOptions",
    omitempty(1, "user", STRING),
    omitempty(2, "role", STRING),
    omitempty(3, "type", STRING),
    omitempty(4, "level", STRING),
)
WINDOWS_SECURITY_CONTEXT_OPTIONS = _core(
    "WindowsSecurityContextOptions",
    pointer(1, "gmsaCredentialSpecName", STRING),
    pointer(2, "gmsaCredentialSpec", STRING),
    pointer(3, "runAsUserName", STRING),
    pointer(4, "hostProcess", BOOL),
)
SECCOMP_PROFILE, APP_ARMOR_PROFILE = _alike(
    ("SeccompProfile", "AppArmorProfile"),
    required(1, "type", STRING),
    pointer(2, "localhostProfile", STRING),
)
SECURITY_CONTEXT = _core(
    "SecurityContext",
    pointer(
        1,
        "capabilities",
        _core("Capabilities", repeated(1, "add", STRING), repeated(2, "drop", STRING)),
    ),
    pointer(2, "privileged", BOOL),
    pointer(3, "seLinuxOptions", SE_LINUX_OPTIONS),
    pointer(4, "runAsUser", INT64),
    pointer(5, "runAsNonRoot", BOOL),
    pointer(6, "readOnlyRootFilesystem", BOOL),
    pointer(7, "allowPrivilegeEscalation", BOOL),
    pointer(8, "runAsGroup", INT64),
    pointer(9, "procMount", STRING),
    pointer(10, "windowsOptions", WINDOWS_SECURITY_CONTEXT_OPTIONS),
    pointer(11, "seccompProfile", SECCOMP_PROFILE),
    pointer(12, "appArmorProfile", APP_ARMOR_PROFILE),
)
CONTAINER_RESTART_RULE = _core(
    "ContainerRestartRule",
    omitempty(1, "action", STRING),
    pointer(
        2,
        "exitCodes",
        _core(
            "ContainerRestartRuleOnExitCodes",
            omitempty(1, "operator", STRING),
            repeated(2, "values", INT32),
        ),
    ),
)
#: ``EphemeralContainerCommon`` repeats these fields under these numbers.
CONTAINER, EPHEMERAL_CONTAINER_COMMON = _alike(
    ("Container", "EphemeralContainerCommon"),
    required(1, "name", STRING),
    omitempty(2, "image", STRING),
    repeated(3, "command", STRING),
    repeated(4, "args", STRING),
    omitempty(5, "workingDir", STRING),
    repeated(6, "ports", CONTAINER_PORT),
    repeated(7, "env", ENV_VAR),
    # Not a pointer: a struct, so ``omitempty`` keeps it, as ``{}`` when unset.
    omitempty(8, "resources", RESOURCE_REQUIREMENTS),
    repeated(9, "volumeMounts", VOLUME_MOUNT),
    pointer(10, "livenessProbe", PROBE),
    pointer(11, "readinessProbe", PROBE),
    pointer(12, "lifecycle", LIFECYCLE),
    omitempty(13, "terminationMessagePath", STRING),
    omitempty(14, "imagePullPolicy", STRING),
    pointer(15, "securityContext", SECURITY_CONTEXT),
    omitempty(16, "stdin", BOOL),
    omitempty(17, "stdinOnce", BOOL),
    omitempty(18, "tty", BOOL),
    repeated(19, "envFrom", ENV_FROM_SOURCE),
    omitempty(20, "terminationMessagePolicy", STRING),
    repeated(
        21,
        "volumeDevices",
        _core("VolumeDevice", required(1, "name", STRING), required(2, "devicePath", STRING)),
    ),
    pointer(22, "startupProbe", PROBE),
    repeated(
        23,
        "resizePolicy",
        _core(
            "ContainerResizePolicy",
            required(1, "resourceName", STRING),
            required(2, "restartPolicy", STRING),
        ),
    ),
    pointer(24, "restartPolicy", STRING),
    repeated(25, "restartPolicyRules", CONTAINER_RESTART_RULE),
)
EPHEMERAL_CONTAINER = _core(
    "EphemeralContainer",
    inline(1, EPHEMERAL_CONTAINER_COMMON),
    omitempty(2, "targetContainerName", STRING),
)

# --- scheduling ------------------------------------------------------------------------------

NODE_SELECTOR_REQUIREMENT = _core(
    "NodeSelectorRequirement",
    required(1, "key", STRING),
    required(2, "operator", STRING),
    repeated(3, "values", STRING),
)
NODE_SELECTOR_TERM = _core(
    "NodeSelectorTerm",
    repeated(1, "matchExpressions", NODE_SELECTOR_REQUIREMENT),
    repeated(2, "matchFields", NODE_SELECTOR_REQUIREMENT),
)
NODE_AFFINITY = _core(
    "NodeAffinity",
    pointer(
        1,
        "requiredDuringSchedulingIgnoredDuringExecution",
        _core("NodeSelector", repeated(1, "nodeSelectorTerms", NODE_SELECTOR_TERM)),
    ),
    repeated(
        2,
        "preferredDuringSchedulingIgnoredDuringExecution",
        _core(
            "PreferredSchedulingTerm",
            required(1, "weight", INT32),
            required(2, "preference", NODE_SELECTOR_TERM),
        ),
    ),
)
POD_AFFINITY_TERM = _core(
    "PodAffinityTerm",
    pointer(1, "labelSelector", LABEL_SELECTOR),
    repeated(2, "namespaces", STRING),
    required(3, "topologyKey", STRING),
    pointer(4, "namespaceSelector", LABEL_SELECTOR),
    repeated(5, "matchLabelKeys", STRING),
    repeated(6, "mismatchLabelKeys", STRING),
)
POD_AFFINITY, POD_ANTI_AFFINITY = _alike(
    ("PodAffinity", "PodAntiAffinity"),
    repeated(1, "requiredDuringSchedulingIgnoredDuringExecution", POD_AFFINITY_TERM),
    repeated(
        2,
        "preferredDuringSchedulingIgnoredDuringExecution",
        _core(
            "WeightedPodAffinityTerm",
            required(1, "weight", INT32),
            required(2, "podAffinityTerm", POD_AFFINITY_TERM),
        ),
    ),
)
AFFINITY = _core(
    "Affinity",
    pointer(1, "nodeAffinity", NODE_AFFINITY),
    pointer(2, "podAffinity", POD_AFFINITY),
    pointer(3, "podAntiAffinity", POD_ANTI_AFFINITY),
)
TOLERATION = _core(
    "Toleration",
    omitempty(1, "key", STRING),
    omitempty(2, "operator", STRING),
    omitempty(3, "value", STRING),
    omitempty(4, "effect", STRING),
    pointer(5, "tolerationSeconds", INT64),
)
TOPOLOGY_SPREAD_CONSTRAINT = _core(
    "TopologySpreadConstraint",
    required(1, "maxSkew", INT32),
    required(2, "topologyKey", STRING),
    required(3, "whenUnsatisfiable", STRING),
    pointer(4, "labelSelector", LABEL_SELECTOR),
    pointer(5, "minDomains", INT32),
    pointer(6, "nodeAffinityPolicy", STRING),
    pointer(7, "nodeTaintsPolicy", STRING),
    repeated(8, "matchLabelKeys", STRING),
)

# --- the pod ---------------------------------------------------------------------------------

POD_SECURITY_CONTEXT = _core(
    "PodSecurityContext",
    pointer(1, "seLinuxOptions", SE_LINUX_OPTIONS),
    pointer(2, "runAsUser", INT64),
    pointer(3, "runAsNonRoot", BOOL),
    repeated(4, "supplementalGroups", INT64),
    pointer(5, "fsGroup", INT64),
    pointer(6, "runAsGroup", INT64),
    repeated(
        7, "sysctls", _core("Sysctl", required(1, "name", STRING), required(2, "value", STRING))
    ),
    pointer(8, "windowsOptions", WINDOWS_SECURITY_CONTEXT_OPTIONS),
    pointer(9, "fsGroupChangePolicy", STRING),
    pointer(10, "seccompProfile", SECCOMP_PROFILE),
    pointer(11, "appArmorProfile", APP_ARMOR_PROFILE),
    pointer(12, "supplementalGroupsPolicy", STRING),
    pointer(13, "seLinuxChangePolicy", STRING),
)
POD_DNS_CONFIG = _core(
    "PodDNSConfig",
    repeated(1, "nameservers", STRING),
    repeated(2, "searches", STRING),
    repeated(
        3,
        "options",
        _core("PodDNSConfigOption", omitempty(1, "name", STRING), pointer(2, "value", STRING)),
    ),
)
POD_RESOURCE_CLAIM = _core(
    "PodResourceClaim",
    required(1, "name", STRING),
    pointer(3, "resourceClaimName", STRING),
    pointer(4, "resourceClaimTemplateName", STRING),
)
POD_SPEC = _core(
    "PodSpec",
    repeated(1, "volumes", VOLUME),
    repeated(2, "containers", CONTAINER),
    omitempty(3, "restartPolicy", STRING),
    pointer(4, "terminationGracePeriodSeconds", INT64),
    pointer(5, "activeDeadlineSeconds", INT64),
    omitempty(6, "dnsPolicy", STRING),
    map_of(7, "nodeSelector", STRING),
    omitempty(8, "serviceAccountName", STRING),
    omitempty(9, "serviceAccount", STRING),
    omitempty(10, "nodeName", STRING),
    omitempty(11, "hostNetwork", BOOL),
    omitempty(12, "hostPID", BOOL),
    omitempty(13, "hostIPC", BOOL),
    pointer(14, "securityContext", POD_SECURITY_CONTEXT),
    repeated(15, "imagePullSecrets", LOCAL_OBJECT_REFERENCE),
    omitempty(16, "hostname", STRING),
    omitempty(17, "subdomain", STRING),
    pointer(18, "affinity", AFFINITY),
    omitempty(19, "schedulerName", STRING),
    repeated(20, "initContainers", CONTAINER),
    pointer(21, "automountServiceAccountToken", BOOL),
    repeated(22, "tolerations", TOLERATION),
    repeated(
        23,
        "hostAliases",
        _core("HostAlias", required(1, "ip", STRING), repeated(2, "hostnames", STRING)),
    ),
    omitempty(24, "priorityClassName", STRING),
    pointer(25, "priority", INT32),
    pointer(26, "dnsConfig", POD_DNS_CONFIG),
    pointer(27, "shareProcessNamespace", BOOL),
    repeated(28, "readinessGates", _core("PodReadinessGate", required(1, "conditionType", STRING))),
    pointer(29, "runtimeClassName", STRING),
    pointer(30, "enableServiceLinks", BOOL),
    pointer(31, "preemptionPolicy", STRING),
    map_of(32, "overhead", QUANTITY),
    repeated(33, "topologySpreadConstraints", TOPOLOGY_SPREAD_CONSTRAINT),
    repeated(34, "ephemeralContainers", EPHEMERAL_CONTAINER),
    pointer(35, "setHostnameAsFQDN", BOOL),
    pointer(36, "os", _core("PodOS", required(1, "name", STRING))),
    pointer(37, "hostUsers", BOOL),
    repeated(38, "schedulingGates", _core("PodSchedulingGate", required(1, "name", STRING))),
    repeated(39, "resourceClaims", POD_RESOURCE_CLAIM),
    pointer(40, "resources", RESOURCE_REQUIREMENTS),
    pointer(41, "hostnameOverride", STRING),
    pointer(43, "schedulingGroup", _core("PodSchedulingGroup", pointer(1, "podGroupName", STRING))),
)
POD_TEMPLATE_SPEC = _core(
    "PodTemplateSpec",
    omitempty(1, "metadata", OBJECT_META),
    omitempty(2, "spec", POD_SPEC),
)
