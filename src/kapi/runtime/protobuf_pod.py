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
    _f,
    _inline,
    _map,
    _message,
    _opt,
    _rep,
    _req,
)

_CORE = "k8s.io.api.core.v1."


def _core(name: str, *fields: Field) -> str:
    return _message(_CORE + name, *fields)


def _alike(names: tuple[str, ...], *fields: Field) -> tuple[str, ...]:
    """Messages that upstream declares with the same fields under the same numbers."""
    return tuple(_core(name, *fields) for name in names)


LOCAL_OBJECT_REFERENCE = _core("LocalObjectReference", _f(1, "name", STRING))
KEY_TO_PATH = _core(
    "KeyToPath",
    _req(1, "key", STRING),
    _req(2, "path", STRING),
    _opt(3, "mode", INT32),
)
OBJECT_FIELD_SELECTOR = _core(
    "ObjectFieldSelector",
    _f(1, "apiVersion", STRING),
    _req(2, "fieldPath", STRING),
)
RESOURCE_FIELD_SELECTOR = _core(
    "ResourceFieldSelector",
    _f(1, "containerName", STRING),
    _req(2, "resource", STRING),
    # Not a pointer: a struct, so ``omitempty`` keeps it, as "0" when unset.
    _f(3, "divisor", QUANTITY),
)
VOLUME_RESOURCE_REQUIREMENTS = _core(
    "VolumeResourceRequirements",
    _map(1, "limits", QUANTITY),
    _map(2, "requests", QUANTITY),
)
RESOURCE_REQUIREMENTS = _core(
    "ResourceRequirements",
    _map(1, "limits", QUANTITY),
    _map(2, "requests", QUANTITY),
    _rep(3, "claims", _core("ResourceClaim", _req(1, "name", STRING), _f(2, "request", STRING))),
)

# --- volumes ---------------------------------------------------------------------------------

DOWNWARD_API_VOLUME_FILE = _core(
    "DownwardAPIVolumeFile",
    _req(1, "path", STRING),
    _opt(2, "fieldRef", OBJECT_FIELD_SELECTOR),
    _opt(3, "resourceFieldRef", RESOURCE_FIELD_SELECTOR),
    _opt(4, "mode", INT32),
)
SECRET_PROJECTION, CONFIG_MAP_PROJECTION = _alike(
    ("SecretProjection", "ConfigMapProjection"),
    _inline(1, LOCAL_OBJECT_REFERENCE),
    _rep(2, "items", KEY_TO_PATH),
    _opt(4, "optional", BOOL),
)
VOLUME_PROJECTION = _core(
    "VolumeProjection",
    _opt(1, "secret", SECRET_PROJECTION),
    _opt(
        2,
        "downwardAPI",
        _core("DownwardAPIProjection", _rep(1, "items", DOWNWARD_API_VOLUME_FILE)),
    ),
    _opt(3, "configMap", CONFIG_MAP_PROJECTION),
    _opt(
        4,
        "serviceAccountToken",
        _core(
            "ServiceAccountTokenProjection",
            _f(1, "audience", STRING),
            _opt(2, "expirationSeconds", INT64),
            _req(3, "path", STRING),
        ),
    ),
    _opt(
        5,
        "clusterTrustBundle",
        _core(
            "ClusterTrustBundleProjection",
            _opt(1, "name", STRING),
            _opt(2, "signerName", STRING),
            _opt(3, "labelSelector", LABEL_SELECTOR),
            _req(4, "path", STRING),
            _opt(5, "optional", BOOL),
        ),
    ),
    _opt(
        6,
        "podCertificate",
        _core(
            "PodCertificateProjection",
            _f(1, "signerName", STRING),
            _f(2, "keyType", STRING),
            _opt(3, "maxExpirationSeconds", INT32),
            _f(4, "credentialBundlePath", STRING),
            _f(5, "keyPath", STRING),
            _f(6, "certificateChainPath", STRING),
            _map(7, "userAnnotations", STRING),
        ),
    ),
)
PERSISTENT_VOLUME_CLAIM_SPEC = _core(
    "PersistentVolumeClaimSpec",
    _rep(1, "accessModes", STRING),
    _f(2, "resources", VOLUME_RESOURCE_REQUIREMENTS),
    _f(3, "volumeName", STRING),
    _opt(4, "selector", LABEL_SELECTOR),
    _opt(5, "storageClassName", STRING),
    _opt(6, "volumeMode", STRING),
    _opt(7, "dataSource", TYPED_LOCAL_OBJECT_REFERENCE),
    _opt(
        8,
        "dataSourceRef",
        _core(
            "TypedObjectReference",
            _opt(1, "apiGroup", STRING),
            _req(2, "kind", STRING),
            _req(3, "name", STRING),
            _opt(4, "namespace", STRING),
        ),
    ),
    _opt(9, "volumeAttributesClassName", STRING),
)
PERSISTENT_VOLUME_CLAIM_TEMPLATE = _core(
    "PersistentVolumeClaimTemplate",
    _f(1, "metadata", OBJECT_META),
    _req(2, "spec", PERSISTENT_VOLUME_CLAIM_SPEC),
)
#: ``VolumeSource``'s members, one per volume plugin, all pointers: a volume sets one.
VOLUME_SOURCE = _core(
    "VolumeSource",
    _opt(
        1,
        "hostPath",
        _core("HostPathVolumeSource", _req(1, "path", STRING), _opt(2, "type", STRING)),
    ),
    _opt(
        2,
        "emptyDir",
        _core("EmptyDirVolumeSource", _f(1, "medium", STRING), _opt(2, "sizeLimit", QUANTITY)),
    ),
    _opt(
        3,
        "gcePersistentDisk",
        _core(
            "GCEPersistentDiskVolumeSource",
            _req(1, "pdName", STRING),
            _f(2, "fsType", STRING),
            _f(3, "partition", INT32),
            _f(4, "readOnly", BOOL),
        ),
    ),
    _opt(
        4,
        "awsElasticBlockStore",
        _core(
            "AWSElasticBlockStoreVolumeSource",
            _req(1, "volumeID", STRING),
            _f(2, "fsType", STRING),
            _f(3, "partition", INT32),
            _f(4, "readOnly", BOOL),
        ),
    ),
    _opt(
        5,
        "gitRepo",
        _core(
            "GitRepoVolumeSource",
            _req(1, "repository", STRING),
            _f(2, "revision", STRING),
            _f(3, "directory", STRING),
        ),
    ),
    _opt(
        6,
        "secret",
        _core(
            "SecretVolumeSource",
            _f(1, "secretName", STRING),
            _rep(2, "items", KEY_TO_PATH),
            _opt(3, "defaultMode", INT32),
            _opt(4, "optional", BOOL),
        ),
    ),
    _opt(
        7,
        "nfs",
        _core(
            "NFSVolumeSource",
            _req(1, "server", STRING),
            _req(2, "path", STRING),
            _f(3, "readOnly", BOOL),
        ),
    ),
    _opt(
        8,
        "iscsi",
        _core(
            "ISCSIVolumeSource",
            _req(1, "targetPortal", STRING),
            _req(2, "iqn", STRING),
            _req(3, "lun", INT32),
            _f(4, "iscsiInterface", STRING),
            _f(5, "fsType", STRING),
            _f(6, "readOnly", BOOL),
            _rep(7, "portals", STRING),
            _f(8, "chapAuthDiscovery", BOOL),
            _opt(10, "secretRef", LOCAL_OBJECT_REFERENCE),
            _f(11, "chapAuthSession", BOOL),
            _opt(12, "initiatorName", STRING),
        ),
    ),
    _opt(
        9,
        "glusterfs",
        _core(
            "GlusterfsVolumeSource",
            _req(1, "endpoints", STRING),
            _req(2, "path", STRING),
            _f(3, "readOnly", BOOL),
        ),
    ),
    _opt(
        10,
        "persistentVolumeClaim",
        _core(
            "PersistentVolumeClaimVolumeSource",
            _req(1, "claimName", STRING),
            _f(2, "readOnly", BOOL),
        ),
    ),
    _opt(
        11,
        "rbd",
        _core(
            "RBDVolumeSource",
            _rep(1, "monitors", STRING),
            _req(2, "image", STRING),
            _f(3, "fsType", STRING),
            _f(4, "pool", STRING),
            _f(5, "user", STRING),
            _f(6, "keyring", STRING),
            _opt(7, "secretRef", LOCAL_OBJECT_REFERENCE),
            _f(8, "readOnly", BOOL),
        ),
    ),
    _opt(
        12,
        "flexVolume",
        _core(
            "FlexVolumeSource",
            _req(1, "driver", STRING),
            _f(2, "fsType", STRING),
            _opt(3, "secretRef", LOCAL_OBJECT_REFERENCE),
            _f(4, "readOnly", BOOL),
            _map(5, "options", STRING),
        ),
    ),
    _opt(
        13,
        "cinder",
        _core(
            "CinderVolumeSource",
            _req(1, "volumeID", STRING),
            _f(2, "fsType", STRING),
            _f(3, "readOnly", BOOL),
            _opt(4, "secretRef", LOCAL_OBJECT_REFERENCE),
        ),
    ),
    _opt(
        14,
        "cephfs",
        _core(
            "CephFSVolumeSource",
            _rep(1, "monitors", STRING),
            _f(2, "path", STRING),
            _f(3, "user", STRING),
            _f(4, "secretFile", STRING),
            _opt(5, "secretRef", LOCAL_OBJECT_REFERENCE),
            _f(6, "readOnly", BOOL),
        ),
    ),
    _opt(
        15,
        "flocker",
        _core("FlockerVolumeSource", _f(1, "datasetName", STRING), _f(2, "datasetUUID", STRING)),
    ),
    _opt(
        16,
        "downwardAPI",
        _core(
            "DownwardAPIVolumeSource",
            _rep(1, "items", DOWNWARD_API_VOLUME_FILE),
            _opt(2, "defaultMode", INT32),
        ),
    ),
    _opt(
        17,
        "fc",
        _core(
            "FCVolumeSource",
            _rep(1, "targetWWNs", STRING),
            _opt(2, "lun", INT32),
            _f(3, "fsType", STRING),
            _f(4, "readOnly", BOOL),
            _rep(5, "wwids", STRING),
        ),
    ),
    _opt(
        18,
        "azureFile",
        _core(
            "AzureFileVolumeSource",
            _req(1, "secretName", STRING),
            _req(2, "shareName", STRING),
            _f(3, "readOnly", BOOL),
        ),
    ),
    _opt(
        19,
        "configMap",
        _core(
            "ConfigMapVolumeSource",
            _inline(1, LOCAL_OBJECT_REFERENCE),
            _rep(2, "items", KEY_TO_PATH),
            _opt(3, "defaultMode", INT32),
            _opt(4, "optional", BOOL),
        ),
    ),
    _opt(
        20,
        "vsphereVolume",
        _core(
            "VsphereVirtualDiskVolumeSource",
            _req(1, "volumePath", STRING),
            _f(2, "fsType", STRING),
            _f(3, "storagePolicyName", STRING),
            _f(4, "storagePolicyID", STRING),
        ),
    ),
    _opt(
        21,
        "quobyte",
        _core(
            "QuobyteVolumeSource",
            _req(1, "registry", STRING),
            _req(2, "volume", STRING),
            _f(3, "readOnly", BOOL),
            _f(4, "user", STRING),
            _f(5, "group", STRING),
            _f(6, "tenant", STRING),
        ),
    ),
    _opt(
        22,
        "azureDisk",
        _core(
            "AzureDiskVolumeSource",
            _req(1, "diskName", STRING),
            _req(2, "diskURI", STRING),
            _opt(3, "cachingMode", STRING),
            _opt(4, "fsType", STRING),
            _opt(5, "readOnly", BOOL),
            _opt(6, "kind", STRING),
        ),
    ),
    _opt(
        23,
        "photonPersistentDisk",
        _core("PhotonPersistentDiskVolumeSource", _req(1, "pdID", STRING), _f(2, "fsType", STRING)),
    ),
    _opt(
        24,
        "portworxVolume",
        _core(
            "PortworxVolumeSource",
            _req(1, "volumeID", STRING),
            _f(2, "fsType", STRING),
            _f(3, "readOnly", BOOL),
        ),
    ),
    _opt(
        25,
        "scaleIO",
        _core(
            "ScaleIOVolumeSource",
            _req(1, "gateway", STRING),
            _req(2, "system", STRING),
            _opt(3, "secretRef", LOCAL_OBJECT_REFERENCE),
            _f(4, "sslEnabled", BOOL),
            _f(5, "protectionDomain", STRING),
            _f(6, "storagePool", STRING),
            _f(7, "storageMode", STRING),
            _f(8, "volumeName", STRING),
            _f(9, "fsType", STRING),
            _f(10, "readOnly", BOOL),
        ),
    ),
    _opt(
        26,
        "projected",
        _core(
            "ProjectedVolumeSource",
            _rep(1, "sources", VOLUME_PROJECTION),
            _opt(2, "defaultMode", INT32),
        ),
    ),
    _opt(
        27,
        "storageos",
        _core(
            "StorageOSVolumeSource",
            _f(1, "volumeName", STRING),
            _f(2, "volumeNamespace", STRING),
            _f(3, "fsType", STRING),
            _f(4, "readOnly", BOOL),
            _opt(5, "secretRef", LOCAL_OBJECT_REFERENCE),
        ),
    ),
    _opt(
        28,
        "csi",
        _core(
            "CSIVolumeSource",
            _req(1, "driver", STRING),
            _opt(2, "readOnly", BOOL),
            _opt(3, "fsType", STRING),
            _map(4, "volumeAttributes", STRING),
            _opt(5, "nodePublishSecretRef", LOCAL_OBJECT_REFERENCE),
        ),
    ),
    _opt(
        29,
        "ephemeral",
        _core(
            "EphemeralVolumeSource",
            _opt(1, "volumeClaimTemplate", PERSISTENT_VOLUME_CLAIM_TEMPLATE),
        ),
    ),
    _opt(
        30,
        "image",
        _core("ImageVolumeSource", _f(1, "reference", STRING), _f(2, "pullPolicy", STRING)),
    ),
)
VOLUME = _core("Volume", _req(1, "name", STRING), _inline(2, VOLUME_SOURCE))

# --- containers ------------------------------------------------------------------------------

CONFIG_MAP_ENV_SOURCE, SECRET_ENV_SOURCE = _alike(
    ("ConfigMapEnvSource", "SecretEnvSource"),
    _inline(1, LOCAL_OBJECT_REFERENCE),
    _opt(2, "optional", BOOL),
)
CONFIG_MAP_KEY_SELECTOR, SECRET_KEY_SELECTOR = _alike(
    ("ConfigMapKeySelector", "SecretKeySelector"),
    _inline(1, LOCAL_OBJECT_REFERENCE),
    _req(2, "key", STRING),
    _opt(3, "optional", BOOL),
)
ENV_VAR = _core(
    "EnvVar",
    _req(1, "name", STRING),
    _f(2, "value", STRING),
    _opt(
        3,
        "valueFrom",
        _core(
            "EnvVarSource",
            _opt(1, "fieldRef", OBJECT_FIELD_SELECTOR),
            _opt(2, "resourceFieldRef", RESOURCE_FIELD_SELECTOR),
            _opt(3, "configMapKeyRef", CONFIG_MAP_KEY_SELECTOR),
            _opt(4, "secretKeyRef", SECRET_KEY_SELECTOR),
            _opt(
                5,
                "fileKeyRef",
                _core(
                    "FileKeySelector",
                    _req(1, "volumeName", STRING),
                    _req(2, "path", STRING),
                    _req(3, "key", STRING),
                    _opt(4, "optional", BOOL),
                ),
            ),
        ),
    ),
)
ENV_FROM_SOURCE = _core(
    "EnvFromSource",
    _f(1, "prefix", STRING),
    _opt(2, "configMapRef", CONFIG_MAP_ENV_SOURCE),
    _opt(3, "secretRef", SECRET_ENV_SOURCE),
)
CONTAINER_PORT = _core(
    "ContainerPort",
    _f(1, "name", STRING),
    _f(2, "hostPort", INT32),
    _req(3, "containerPort", INT32),
    _f(4, "protocol", STRING),
    _f(5, "hostIP", STRING),
)
VOLUME_MOUNT = _core(
    "VolumeMount",
    _req(1, "name", STRING),
    _f(2, "readOnly", BOOL),
    _req(3, "mountPath", STRING),
    _f(4, "subPath", STRING),
    _opt(5, "mountPropagation", STRING),
    _f(6, "subPathExpr", STRING),
    _opt(7, "recursiveReadOnly", STRING),
)
EXEC_ACTION = _core("ExecAction", _rep(1, "command", STRING))
HTTP_GET_ACTION = _core(
    "HTTPGetAction",
    _f(1, "path", STRING),
    _req(2, "port", INT_OR_STRING),
    _f(3, "host", STRING),
    _f(4, "scheme", STRING),
    _rep(5, "httpHeaders", _core("HTTPHeader", _req(1, "name", STRING), _req(2, "value", STRING))),
)
TCP_SOCKET_ACTION = _core("TCPSocketAction", _req(1, "port", INT_OR_STRING), _f(2, "host", STRING))
PROBE = _core(
    "Probe",
    _inline(
        1,
        _core(
            "ProbeHandler",
            _opt(1, "exec", EXEC_ACTION),
            _opt(2, "httpGet", HTTP_GET_ACTION),
            _opt(3, "tcpSocket", TCP_SOCKET_ACTION),
            _opt(
                4, "grpc", _core("GRPCAction", _req(1, "port", INT32), _opt(2, "service", STRING))
            ),
        ),
    ),
    _f(2, "initialDelaySeconds", INT32),
    _f(3, "timeoutSeconds", INT32),
    _f(4, "periodSeconds", INT32),
    _f(5, "successThreshold", INT32),
    _f(6, "failureThreshold", INT32),
    _opt(7, "terminationGracePeriodSeconds", INT64),
)
LIFECYCLE_HANDLER = _core(
    "LifecycleHandler",
    _opt(1, "exec", EXEC_ACTION),
    _opt(2, "httpGet", HTTP_GET_ACTION),
    _opt(3, "tcpSocket", TCP_SOCKET_ACTION),
    _opt(4, "sleep", _core("SleepAction", _req(1, "seconds", INT64))),
)
LIFECYCLE = _core(
    "Lifecycle",
    _opt(1, "postStart", LIFECYCLE_HANDLER),
    _opt(2, "preStop", LIFECYCLE_HANDLER),
    _opt(3, "stopSignal", STRING),
)
SE_LINUX_OPTIONS = _core(
    "SELinuxOptions",
    _f(1, "user", STRING),
    _f(2, "role", STRING),
    _f(3, "type", STRING),
    _f(4, "level", STRING),
)
WINDOWS_SECURITY_CONTEXT_OPTIONS = _core(
    "WindowsSecurityContextOptions",
    _opt(1, "gmsaCredentialSpecName", STRING),
    _opt(2, "gmsaCredentialSpec", STRING),
    _opt(3, "runAsUserName", STRING),
    _opt(4, "hostProcess", BOOL),
)
SECCOMP_PROFILE, APP_ARMOR_PROFILE = _alike(
    ("SeccompProfile", "AppArmorProfile"),
    _req(1, "type", STRING),
    _opt(2, "localhostProfile", STRING),
)
SECURITY_CONTEXT = _core(
    "SecurityContext",
    _opt(
        1,
        "capabilities",
        _core("Capabilities", _rep(1, "add", STRING), _rep(2, "drop", STRING)),
    ),
    _opt(2, "privileged", BOOL),
    _opt(3, "seLinuxOptions", SE_LINUX_OPTIONS),
    _opt(4, "runAsUser", INT64),
    _opt(5, "runAsNonRoot", BOOL),
    _opt(6, "readOnlyRootFilesystem", BOOL),
    _opt(7, "allowPrivilegeEscalation", BOOL),
    _opt(8, "runAsGroup", INT64),
    _opt(9, "procMount", STRING),
    _opt(10, "windowsOptions", WINDOWS_SECURITY_CONTEXT_OPTIONS),
    _opt(11, "seccompProfile", SECCOMP_PROFILE),
    _opt(12, "appArmorProfile", APP_ARMOR_PROFILE),
)
CONTAINER_RESTART_RULE = _core(
    "ContainerRestartRule",
    _f(1, "action", STRING),
    _opt(
        2,
        "exitCodes",
        _core(
            "ContainerRestartRuleOnExitCodes", _f(1, "operator", STRING), _rep(2, "values", INT32)
        ),
    ),
)
#: ``EphemeralContainerCommon`` repeats these fields under these numbers.
CONTAINER, EPHEMERAL_CONTAINER_COMMON = _alike(
    ("Container", "EphemeralContainerCommon"),
    _req(1, "name", STRING),
    _f(2, "image", STRING),
    _rep(3, "command", STRING),
    _rep(4, "args", STRING),
    _f(5, "workingDir", STRING),
    _rep(6, "ports", CONTAINER_PORT),
    _rep(7, "env", ENV_VAR),
    # Not a pointer: a struct, so ``omitempty`` keeps it, as ``{}`` when unset.
    _f(8, "resources", RESOURCE_REQUIREMENTS),
    _rep(9, "volumeMounts", VOLUME_MOUNT),
    _opt(10, "livenessProbe", PROBE),
    _opt(11, "readinessProbe", PROBE),
    _opt(12, "lifecycle", LIFECYCLE),
    _f(13, "terminationMessagePath", STRING),
    _f(14, "imagePullPolicy", STRING),
    _opt(15, "securityContext", SECURITY_CONTEXT),
    _f(16, "stdin", BOOL),
    _f(17, "stdinOnce", BOOL),
    _f(18, "tty", BOOL),
    _rep(19, "envFrom", ENV_FROM_SOURCE),
    _f(20, "terminationMessagePolicy", STRING),
    _rep(
        21,
        "volumeDevices",
        _core("VolumeDevice", _req(1, "name", STRING), _req(2, "devicePath", STRING)),
    ),
    _opt(22, "startupProbe", PROBE),
    _rep(
        23,
        "resizePolicy",
        _core(
            "ContainerResizePolicy",
            _req(1, "resourceName", STRING),
            _req(2, "restartPolicy", STRING),
        ),
    ),
    _opt(24, "restartPolicy", STRING),
    _rep(25, "restartPolicyRules", CONTAINER_RESTART_RULE),
)
EPHEMERAL_CONTAINER = _core(
    "EphemeralContainer",
    _inline(1, EPHEMERAL_CONTAINER_COMMON),
    _f(2, "targetContainerName", STRING),
)

# --- scheduling ------------------------------------------------------------------------------

NODE_SELECTOR_REQUIREMENT = _core(
    "NodeSelectorRequirement",
    _req(1, "key", STRING),
    _req(2, "operator", STRING),
    _rep(3, "values", STRING),
)
NODE_SELECTOR_TERM = _core(
    "NodeSelectorTerm",
    _rep(1, "matchExpressions", NODE_SELECTOR_REQUIREMENT),
    _rep(2, "matchFields", NODE_SELECTOR_REQUIREMENT),
)
NODE_AFFINITY = _core(
    "NodeAffinity",
    _opt(
        1,
        "requiredDuringSchedulingIgnoredDuringExecution",
        _core("NodeSelector", _rep(1, "nodeSelectorTerms", NODE_SELECTOR_TERM)),
    ),
    _rep(
        2,
        "preferredDuringSchedulingIgnoredDuringExecution",
        _core(
            "PreferredSchedulingTerm",
            _req(1, "weight", INT32),
            _req(2, "preference", NODE_SELECTOR_TERM),
        ),
    ),
)
POD_AFFINITY_TERM = _core(
    "PodAffinityTerm",
    _opt(1, "labelSelector", LABEL_SELECTOR),
    _rep(2, "namespaces", STRING),
    _req(3, "topologyKey", STRING),
    _opt(4, "namespaceSelector", LABEL_SELECTOR),
    _rep(5, "matchLabelKeys", STRING),
    _rep(6, "mismatchLabelKeys", STRING),
)
POD_AFFINITY, POD_ANTI_AFFINITY = _alike(
    ("PodAffinity", "PodAntiAffinity"),
    _rep(1, "requiredDuringSchedulingIgnoredDuringExecution", POD_AFFINITY_TERM),
    _rep(
        2,
        "preferredDuringSchedulingIgnoredDuringExecution",
        _core(
            "WeightedPodAffinityTerm",
            _req(1, "weight", INT32),
            _req(2, "podAffinityTerm", POD_AFFINITY_TERM),
        ),
    ),
)
AFFINITY = _core(
    "Affinity",
    _opt(1, "nodeAffinity", NODE_AFFINITY),
    _opt(2, "podAffinity", POD_AFFINITY),
    _opt(3, "podAntiAffinity", POD_ANTI_AFFINITY),
)
TOLERATION = _core(
    "Toleration",
    _f(1, "key", STRING),
    _f(2, "operator", STRING),
    _f(3, "value", STRING),
    _f(4, "effect", STRING),
    _opt(5, "tolerationSeconds", INT64),
)
TOPOLOGY_SPREAD_CONSTRAINT = _core(
    "TopologySpreadConstraint",
    _req(1, "maxSkew", INT32),
    _req(2, "topologyKey", STRING),
    _req(3, "whenUnsatisfiable", STRING),
    _opt(4, "labelSelector", LABEL_SELECTOR),
    _opt(5, "minDomains", INT32),
    _opt(6, "nodeAffinityPolicy", STRING),
    _opt(7, "nodeTaintsPolicy", STRING),
    _rep(8, "matchLabelKeys", STRING),
)

# --- the pod ---------------------------------------------------------------------------------

POD_SECURITY_CONTEXT = _core(
    "PodSecurityContext",
    _opt(1, "seLinuxOptions", SE_LINUX_OPTIONS),
    _opt(2, "runAsUser", INT64),
    _opt(3, "runAsNonRoot", BOOL),
    _rep(4, "supplementalGroups", INT64),
    _opt(5, "fsGroup", INT64),
    _opt(6, "runAsGroup", INT64),
    _rep(7, "sysctls", _core("Sysctl", _req(1, "name", STRING), _req(2, "value", STRING))),
    _opt(8, "windowsOptions", WINDOWS_SECURITY_CONTEXT_OPTIONS),
    _opt(9, "fsGroupChangePolicy", STRING),
    _opt(10, "seccompProfile", SECCOMP_PROFILE),
    _opt(11, "appArmorProfile", APP_ARMOR_PROFILE),
    _opt(12, "supplementalGroupsPolicy", STRING),
    _opt(13, "seLinuxChangePolicy", STRING),
)
POD_DNS_CONFIG = _core(
    "PodDNSConfig",
    _rep(1, "nameservers", STRING),
    _rep(2, "searches", STRING),
    _rep(
        3,
        "options",
        _core("PodDNSConfigOption", _f(1, "name", STRING), _opt(2, "value", STRING)),
    ),
)
POD_RESOURCE_CLAIM = _core(
    "PodResourceClaim",
    _req(1, "name", STRING),
    _opt(3, "resourceClaimName", STRING),
    _opt(4, "resourceClaimTemplateName", STRING),
)
POD_SPEC = _core(
    "PodSpec",
    _rep(1, "volumes", VOLUME),
    _rep(2, "containers", CONTAINER),
    _f(3, "restartPolicy", STRING),
    _opt(4, "terminationGracePeriodSeconds", INT64),
    _opt(5, "activeDeadlineSeconds", INT64),
    _f(6, "dnsPolicy", STRING),
    _map(7, "nodeSelector", STRING),
    _f(8, "serviceAccountName", STRING),
    _f(9, "serviceAccount", STRING),
    _f(10, "nodeName", STRING),
    _f(11, "hostNetwork", BOOL),
    _f(12, "hostPID", BOOL),
    _f(13, "hostIPC", BOOL),
    _opt(14, "securityContext", POD_SECURITY_CONTEXT),
    _rep(15, "imagePullSecrets", LOCAL_OBJECT_REFERENCE),
    _f(16, "hostname", STRING),
    _f(17, "subdomain", STRING),
    _opt(18, "affinity", AFFINITY),
    _f(19, "schedulerName", STRING),
    _rep(20, "initContainers", CONTAINER),
    _opt(21, "automountServiceAccountToken", BOOL),
    _rep(22, "tolerations", TOLERATION),
    _rep(
        23, "hostAliases", _core("HostAlias", _req(1, "ip", STRING), _rep(2, "hostnames", STRING))
    ),
    _f(24, "priorityClassName", STRING),
    _opt(25, "priority", INT32),
    _opt(26, "dnsConfig", POD_DNS_CONFIG),
    _opt(27, "shareProcessNamespace", BOOL),
    _rep(28, "readinessGates", _core("PodReadinessGate", _req(1, "conditionType", STRING))),
    _opt(29, "runtimeClassName", STRING),
    _opt(30, "enableServiceLinks", BOOL),
    _opt(31, "preemptionPolicy", STRING),
    _map(32, "overhead", QUANTITY),
    _rep(33, "topologySpreadConstraints", TOPOLOGY_SPREAD_CONSTRAINT),
    _rep(34, "ephemeralContainers", EPHEMERAL_CONTAINER),
    _opt(35, "setHostnameAsFQDN", BOOL),
    _opt(36, "os", _core("PodOS", _req(1, "name", STRING))),
    _opt(37, "hostUsers", BOOL),
    _rep(38, "schedulingGates", _core("PodSchedulingGate", _req(1, "name", STRING))),
    _rep(39, "resourceClaims", POD_RESOURCE_CLAIM),
    _opt(40, "resources", RESOURCE_REQUIREMENTS),
    _opt(41, "hostnameOverride", STRING),
    _opt(43, "schedulingGroup", _core("PodSchedulingGroup", _opt(1, "podGroupName", STRING))),
)
POD_TEMPLATE_SPEC = _core(
    "PodTemplateSpec",
    _f(1, "metadata", OBJECT_META),
    _f(2, "spec", POD_SPEC),
)
