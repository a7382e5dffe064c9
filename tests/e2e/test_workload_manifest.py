"""The built-in API users apply every day, driven by kubectl 1.27-1.33 as a new user would.

One real multi-kind manifest (a Deployment and the objects an application
ships with it) is applied, read back, described, scaled and deleted by every
release, and the ``kubectl create`` generators of the workload kinds are run;
kubectl 1.32 and later send those bodies as protobuf.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import KapiServer, start_server
from tests.helpers.kubectl import Kubectl, make_kubectl
from tests.helpers.objects import unique

pytestmark = pytest.mark.kubectl

VERSIONS = ["1.27", "1.28", "1.29", "1.30", "1.31", "1.32", "1.33"]

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      serviceAccountName: web
      containers:
      - name: nginx
        image: nginx:1.27
        ports:
        - containerPort: 80
        envFrom:
        - configMapRef: {name: web-config}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 80
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
data:
  MODE: production
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: web
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: web-reader
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: web-reader
subjects:
- kind: ServiceAccount
  name: web
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: web-reader
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 5
  metrics:
  - type: Resource
    resource:
      name: cpu
      target: {type: Utilization, averageUtilization: 70}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: busybox:1.36
        command: [sh, -c, "echo migrated"]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
spec:
  rules:
  - host: web.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: web
            port: {number: 80}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: web}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: web
spec:
  podSelector:
    matchLabels: {app: web}
  ingress:
  - from:
    - podSelector: {}
    ports:
    - port: 80
"""

APPLIED = [
    "deployment.apps/web created",
    "service/web created",
    "configmap/web-config created",
    "serviceaccount/web created",
    "role.rbac.authorization.k8s.io/web-reader created",
    "rolebinding.rbac.authorization.k8s.io/web-reader created",
    "horizontalpodautoscaler.autoscaling/web created",
    "job.batch/migrate created",
    "ingress.networking.k8s.io/web created",
    "poddisruptionbudget.policy/web created",
    "networkpolicy.networking.k8s.io/web created",
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    started = start_server(tmp_path_factory.mktemp("workloads") / "data")
    yield started
    started.stop()


@pytest.fixture(params=VERSIONS)
def kubectl(request: pytest.FixtureRequest, server: KapiServer, tmp_path: Path) -> Kubectl:
    return make_kubectl(server, tmp_path, request.param)


@pytest.fixture
def ns(kubectl: Kubectl) -> str:
    name = unique("wl")
    kubectl.ok("create", "namespace", name)
    return name


def test_apply_get_describe_scale_delete(kubectl: Kubectl, ns: str, tmp_path: Path) -> None:
    manifest = tmp_path / "app.yaml"
    manifest.write_text(MANIFEST)
    n = ("-n", ns)
    assert kubectl.ok(*n, "apply", "-f", str(manifest)).out_lines == APPLIED

    names = kubectl.ok(
        *n, "get", "deploy,svc,cm,sa,role,rolebinding,hpa,job,ingress,pdb,netpol", "-o", "name"
    ).out_lines
    for expected in (
        "deployment.apps/web",
        "service/web",
        "configmap/web-config",
        "serviceaccount/web",
        "role.rbac.authorization.k8s.io/web-reader",
        "rolebinding.rbac.authorization.k8s.io/web-reader",
        "horizontalpodautoscaler.autoscaling/web",
        "job.batch/migrate",
        "ingress.networking.k8s.io/web",
        "poddisruptionbudget.policy/web",
        "networkpolicy.networking.k8s.io/web",
    ):
        assert expected in names, names

    deployment = json.loads(kubectl.ok(*n, "get", "deploy", "web", "-o", "json").stdout)
    pod = deployment["spec"]["template"]["spec"]
    # The pod-template defaults upstream applies inside every workload kind.
    assert pod["containers"][0]["ports"][0]["protocol"] == "TCP"
    assert pod["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert (pod["dnsPolicy"], pod["restartPolicy"]) == ("ClusterFirst", "Always")
    assert deployment["spec"]["strategy"]["rollingUpdate"] == {
        "maxSurge": "25%",
        "maxUnavailable": "25%",
    }
    service = json.loads(kubectl.ok(*n, "get", "svc", "web", "-o", "json").stdout)
    assert service["spec"]["clusterIP"] == service["spec"]["clusterIPs"][0]
    assert service["spec"]["ports"][0]["protocol"] == "TCP"

    described = kubectl.ok(*n, "describe", "deployment", "web").stdout
    assert "Name:" in described and "web" in described
    assert "nginx:1.27" in described

    policy = json.loads(kubectl.ok(*n, "get", "netpol", "web", "-o", "json").stdout)
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    assert policy["spec"]["ingress"][0]["ports"] == [{"port": 80, "protocol": "TCP"}]
    netpol_row = kubectl.ok(*n, "get", "netpol", "web", "--no-headers").out_lines
    assert [line.split()[:2] for line in netpol_row] == [["web", "app=web"]]
    described_policy = kubectl.ok(*n, "describe", "networkpolicy", "web").stdout
    assert "PodSelector:     app=web" in described_policy
    assert "To Port: 80/TCP" in described_policy

    scaled = kubectl.ok(*n, "scale", "deployment", "web", "--replicas=3")
    assert scaled.out_lines == ["deployment.apps/web scaled"]
    replicas = kubectl.ok(*n, "get", "deploy", "web", "-o", "jsonpath={.spec.replicas}")
    assert replicas.stdout == "3"

    history = kubectl.ok(*n, "rollout", "history", "deployment/web")
    assert history.out_lines[0] == "deployment.apps/web "

    everything = kubectl.ok(*n, "get", "all", "-o", "name").out_lines
    for expected in (
        "service/web",
        "deployment.apps/web",
        "horizontalpodautoscaler.autoscaling/web",
        "job.batch/migrate",
    ):
        assert expected in everything, everything

    deleted = kubectl.ok(*n, "delete", "-f", str(manifest)).out_lines
    # kubectl names deleted objects as kind.group "name".
    assert deleted == [
        '{} "{}" deleted'.format(*line.removesuffix(" created").split("/")) for line in APPLIED
    ]
    assert kubectl.ok(*n, "get", "deploy,svc,hpa,job,netpol", "-o", "name").out_lines == []


def test_create_generators(kubectl: Kubectl, ns: str) -> None:
    n = ("-n", ns)
    assert kubectl.ok(*n, "create", "deployment", "api", "--image=nginx").out_lines == [
        "deployment.apps/api created"
    ]
    assert kubectl.ok(*n, "create", "service", "clusterip", "api", "--tcp=80:8080").out_lines == [
        "service/api created"
    ]
    assert kubectl.ok(*n, "create", "job", "once", "--image=busybox").out_lines == [
        "job.batch/once created"
    ]
    role = kubectl.ok(*n, "create", "role", "cm-reader", "--verb=get", "--resource=configmaps")
    assert role.out_lines == ["role.rbac.authorization.k8s.io/cm-reader created"]
    binding = kubectl.ok(
        *n, "create", "rolebinding", "cm-reader", "--role=cm-reader", "--user=alice"
    )
    assert binding.out_lines == ["rolebinding.rbac.authorization.k8s.io/cm-reader created"]
    assert kubectl.ok(*n, "create", "serviceaccount", "robot").out_lines == [
        "serviceaccount/robot created"
    ]
    token = kubectl.ok(*n, "create", "token", "robot").stdout.strip()
    assert token.count(".") == 2  # a JWT: header, claims, signature

    job = json.loads(kubectl.ok(*n, "get", "job", "once", "-o", "json").stdout)
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert "batch.kubernetes.io/controller-uid" in job["spec"]["selector"]["matchLabels"]
