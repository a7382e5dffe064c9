"""``deployments/rollback``: the rollback request of apps/v1beta1 and extensions/v1beta1.

Before ``kubectl rollout undo`` did the work on the client, a client POSTed a
``DeploymentRollback`` naming a revision, and the server recorded it on the
Deployment for the deployment controller to act on.  Upstream's
``RollbackREST`` writes the request straight to storage, past the Deployment
strategy: the annotations it carries are merged in and the revision becomes
``spec.rollbackTo``, which the v1 hub keeps as the
``deprecated.deployment.rollback.to`` annotation.  The generation does not
move, and the answer is a success ``Status``, not the Deployment.
"""

from __future__ import annotations

from kapi.apimachinery import errors, validation
from kapi.apimachinery.field_errors import FieldError, Path, required
from kapi.apimachinery.unstructured import Object
from kapi.apis.apps_validation import ROLLBACK_TO_ANNOTATION
from kapi.apis.generated import apps_v1beta1, extensions_v1beta1
from kapi.runtime.schema import Struct
from kapi.runtime.strategy import StoreLookup

#: The versions that served the subresource, and the declaration of their request body.
BODIES: dict[str, Struct] = {
    "apps/v1beta1": apps_v1beta1.DeploymentRollback,
    "extensions/v1beta1": extensions_v1beta1.DeploymentRollback,
}


def validate_deployment_rollback(rollback: Object) -> list[FieldError]:
    """Upstream ``ValidateDeploymentRollback``: annotations, a name, a revision not below 0."""
    errs = validation.validate_annotations(
        rollback.get("updatedAnnotations"), Path("updatedAnnotations")
    )
    if not rollback.get("name"):
        errs.append(required(Path("name"), "name is required"))
    revision = (rollback.get("rollbackTo") or {}).get("revision") or 0
    errs += validation.validate_nonnegative_field(revision, Path("rollback", "version"))
    return errs


def record_rollback(deployment: Object, rollback: Object) -> Object:
    """``deployment`` with the request's annotations and the revision to roll back to."""
    annotations = deployment.setdefault("metadata", {}).setdefault("annotations", {})
    annotations.update(rollback.get("updatedAnnotations") or {})
    revision = (rollback.get("rollbackTo") or {}).get("revision") or 0
    annotations[ROLLBACK_TO_ANNOTATION] = str(revision)
    return deployment


class DeploymentRollbackCreator:
    """POST a ``DeploymentRollback`` to ``deployments/<name>/rollback``."""

    kind = ("", "", "DeploymentRollback")

    def body_schema(self, api_version: str, kind: str) -> Struct | None:
        return BODIES.get(api_version) if kind == "DeploymentRollback" else None

    async def create(
        self, stores: StoreLookup, namespace: str | None, name: str, body: Object, *, dry_run: bool
    ) -> Object:
        if errs := validate_deployment_rollback(body):
            raise errors.invalid("DeploymentRollback", "apps", body.get("name") or "", errs)
        if body.get("name") != name:
            raise errors.bad_request("name in URL does not match name in DeploymentRollback object")

        async def record(deployment: Object) -> Object:
            return record_rollback(deployment, body)

        await stores("apps", "deployments").update(
            namespace, name, record, subresource="rollback", dry_run=dry_run
        )
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "message": f'rollback request for deployment "{name}" succeeded',
            "code": 200,
        }
