"""CRD conversion through a real HTTPS webhook, checked the way upstream checks the answer."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kapi.apiextensions.webhook_converter import WebhookConverter
from kapi.apimachinery.errors import StatusError
from kapi.runtime.scheme import GroupVersionKind
from kapi.server import free_port
from tests.tls import CertificateAuthority, ServingCertificate, make_ca, make_serving_cert
from tests.webhook_server import WebhookServer, serve_webhook

V1 = "stable.example.com/v1"
V2 = "stable.example.com/v2"
GVK = "stable.example.com/v1, Kind=Widget"
WIDGET = GroupVersionKind("stable.example.com", "v1", "Widget")

Mutation = Callable[[dict[str, Any]], None]


def widget(name: str = "w1", api_version: str = V1, **spec: Any) -> dict[str, Any]:
    key = "size" if api_version == V1 else "replicas"
    return {
        "apiVersion": api_version,
        "kind": "Widget",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "generation": 1,
            "labels": {"app": "demo"},
        },
        "spec": {key: 3, **spec},
    }


def v1_to_v2(obj: dict[str, Any], desired: str) -> dict[str, Any]:
    """The webhook's conversion: ``spec.size`` (v1) is ``spec.replicas`` in v2."""
    out = copy.deepcopy(obj)
    out["apiVersion"] = desired
    out["spec"]["replicas"] = out["spec"].pop("size")
    return out


class Webhook:
    """A conversion webhook whose answer tests can spoil."""

    def __init__(self) -> None:
        self.object_mutation: Mutation = lambda obj: None
        self.review_mutation: Mutation = lambda review: None

    def __call__(self, path: str, review: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        request = review["request"]
        converted = []
        for obj in request["objects"]:
            out = v1_to_v2(obj, request["desiredAPIVersion"])
            self.object_mutation(out)
            converted.append(out)
        answer = {
            "apiVersion": review["apiVersion"],
            "kind": "ConversionReview",
            "response": {
                "uid": request["uid"],
                "result": {"status": "Success"},
                "convertedObjects": converted,
            },
        }
        self.review_mutation(answer)
        return 200, answer


@pytest.fixture(scope="module")
def ca() -> CertificateAuthority:
    return make_ca()


@pytest.fixture(scope="module")
def cert(ca: CertificateAuthority, tmp_path_factory: pytest.TempPathFactory) -> ServingCertificate:
    return make_serving_cert(ca, tmp_path_factory.mktemp("tls"))


@pytest.fixture
def webhook() -> Webhook:
    return Webhook()


@pytest.fixture
def server(cert: ServingCertificate, webhook: Webhook) -> Iterator[WebhookServer]:
    with serve_webhook(cert, webhook) as running:
        yield running


def run(
    server: WebhookServer | str,
    ca: CertificateAuthority,
    objects: list[dict[str, Any]],
    desired: str = V2,
    review_versions: tuple[str, ...] = ("v1", "v1beta1"),
) -> Any:
    """Convert one object (``convert_object``) or, for a list of several, ``convert``."""
    url = server if isinstance(server, str) else server.url("/convert")

    async def main() -> Any:
        converter = WebhookConverter(
            {"url": url, "caBundle": ca.cert_pem}, list(review_versions), WIDGET
        )
        try:
            if len(objects) == 1:
                return await converter.convert_object(objects[0], desired)
            return await converter.convert(objects, desired)
        finally:
            await converter.aclose()

    return asyncio.run(main())


def failure(*args: Any, **kwargs: Any) -> str:
    with pytest.raises(StatusError) as info:
        run(*args, **kwargs)
    assert (info.value.code, info.value.reason) == (500, "")
    return info.value.message


def test_converts_and_keeps_the_original_metadata(
    server: WebhookServer, ca: CertificateAuthority, webhook: Webhook
):
    def relabel(obj: dict[str, Any]) -> None:
        obj["metadata"]["labels"]["converted"] = "true"
        obj["metadata"]["generation"] = 42
        obj["metadata"]["finalizers"] = ["sneaky"]

    webhook.object_mutation = relabel
    converted = run(server, ca, [widget()])
    expected = widget(api_version=V2)
    expected["metadata"]["labels"]["converted"] = "true"
    assert converted == expected
    (request,) = server.requests
    review = request.body
    assert review["apiVersion"] == "apiextensions.k8s.io/v1"
    assert review["kind"] == "ConversionReview"
    assert review["request"]["desiredAPIVersion"] == V2
    assert review["request"]["objects"] == [widget()]
    assert request.path == "/convert?timeout=30s"


def test_objects_already_in_the_desired_version_are_not_sent(
    server: WebhookServer, ca: CertificateAuthority
):
    assert run(server, ca, [widget(api_version=V2)]) == widget(api_version=V2)
    assert server.requests == []
    mixed = [widget("a"), widget("b", V2), widget("c")]
    converted = run(server, ca, mixed)
    assert converted == [widget("a", V2), widget("b", V2), widget("c", V2)]
    (request,) = server.requests
    assert [o["metadata"]["name"] for o in request.body["request"]["objects"]] == ["a", "c"]


def test_v1beta1_review_when_listed_first(
    server: WebhookServer, ca: CertificateAuthority, webhook: Webhook
):
    # v1beta1 answers are not checked for uid, as upstream.
    webhook.review_mutation = lambda review: review["response"].pop("uid")
    assert run(server, ca, [widget()], review_versions=("v1beta1", "v1")) == widget(api_version=V2)
    assert server.requests[0].body["apiVersion"] == "apiextensions.k8s.io/v1beta1"


def test_no_supported_review_version(server: WebhookServer, ca: CertificateAuthority):
    assert failure(server, ca, [widget()], review_versions=("v2",)) == (
        "no supported conversion review versions"
    )


def test_uid_must_match(server: WebhookServer, ca: CertificateAuthority, webhook: Webhook):
    webhook.review_mutation = lambda review: review["response"].update(uid="not-mine")
    message = failure(server, ca, [widget()])
    uid = server.requests[0].body["request"]["uid"]
    assert message == (
        f'conversion webhook for {GVK} failed: expected response.uid="{uid}", got "not-mine"'
    )


def test_v1_answer_must_be_a_v1_review(
    server: WebhookServer, ca: CertificateAuthority, webhook: Webhook
):
    webhook.review_mutation = lambda review: review.update(
        apiVersion="apiextensions.k8s.io/v1beta1"
    )
    assert failure(server, ca, [widget()]) == (
        f"conversion webhook for {GVK} failed: expected webhook response of "
        "apiextensions.k8s.io/v1, Kind=ConversionReview, got "
        "apiextensions.k8s.io/v1beta1, Kind=ConversionReview"
    )


def test_missing_response(server: WebhookServer, ca: CertificateAuthority, webhook: Webhook):
    webhook.review_mutation = lambda review: review.pop("response")
    assert failure(server, ca, [widget()]) == (
        f"conversion webhook for {GVK} failed: no response provided"
    )


def test_failure_result_message_is_surfaced(
    server: WebhookServer, ca: CertificateAuthority, webhook: Webhook
):
    webhook.review_mutation = lambda review: review["response"].update(
        result={"status": "Failure", "message": "custom webhook conversion error"}
    )
    assert failure(server, ca, [widget()]) == (
        f"conversion webhook for {GVK} failed: custom webhook conversion error"
    )
    webhook.review_mutation = lambda review: review["response"].update(result={"status": "Failure"})
    assert failure(server, ca, [widget()]) == (
        f"conversion webhook for {GVK} failed: response.result.status was 'Failure', not 'Success'"
    )


def test_object_count_must_match(server: WebhookServer, ca: CertificateAuthority, webhook: Webhook):
    webhook.review_mutation = lambda review: review["response"].update(convertedObjects=[])
    assert failure(server, ca, [widget()]) == (
        f"conversion webhook for {GVK} returned 0 objects, expected 1"
    )


def test_converted_api_version_must_be_the_desired_one(
    server: WebhookServer, ca: CertificateAuthority, webhook: Webhook
):
    webhook.object_mutation = lambda obj: obj.update(apiVersion=V1)
    assert failure(server, ca, [widget()]) == (
        f"conversion webhook for {GVK} returned invalid object at index 0: "
        f"invalid groupVersion (expected {V2}, received {V1})"
    )


def test_converted_kind_must_not_change(
    server: WebhookServer, ca: CertificateAuthority, webhook: Webhook
):
    webhook.object_mutation = lambda obj: obj.update(kind="Gadget")
    assert failure(server, ca, [widget()]) == (
        f"conversion webhook for {GVK} returned invalid object at index 0: "
        "invalid kind (expected Widget, received Gadget)"
    )


def test_converted_object_must_have_a_kind(
    server: WebhookServer, ca: CertificateAuthority, webhook: Webhook
):
    webhook.object_mutation = lambda obj: [obj.pop(k) for k in ("kind", "metadata", "spec")]
    assert failure(server, ca, [widget()]) == (
        f"Object 'Kind' is missing in '{{\"apiVersion\":\"{V2}\"}}'"
    )


@pytest.mark.parametrize(
    ("field", "label"), [("name", "name"), ("namespace", "namespace"), ("uid", "UID")]
)
def test_identity_metadata_must_not_change(
    server: WebhookServer, ca: CertificateAuthority, webhook: Webhook, field: str, label: str
):
    webhook.object_mutation = lambda obj: obj["metadata"].update({field: "changed"})
    original = widget()["metadata"][field]
    assert failure(server, ca, [widget()]) == (
        f"conversion webhook for {GVK} returned invalid object: "
        f"must have the same {label}: {original} != changed"
    )


def test_changed_labels_must_be_valid(
    server: WebhookServer, ca: CertificateAuthority, webhook: Webhook
):
    webhook.object_mutation = lambda obj: obj["metadata"]["labels"].update(bad="no spaces")
    assert failure(server, ca, [widget()]) == (
        f"conversion webhook for {GVK} returned invalid metadata: "
        'metadata.labels: Invalid value: "no spaces": a valid label must be an empty string or '
        "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
        "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    )


def test_label_values_must_be_strings(
    server: WebhookServer, ca: CertificateAuthority, webhook: Webhook
):
    webhook.object_mutation = lambda obj: obj["metadata"]["labels"].update(count=3)
    assert failure(server, ca, [widget()]) == (
        f"conversion webhook for {GVK} returned invalid metadata: "
        "metadata.labels[count] must be a string, but is int64 in converted object"
    )


def test_list_messages_name_the_list_and_the_index(
    server: WebhookServer, ca: CertificateAuthority, webhook: Webhook
):
    def break_second(obj: dict[str, Any]) -> None:
        if obj["metadata"]["name"] == "c":
            obj["metadata"]["name"] = "renamed"

    webhook.object_mutation = break_second
    objects = [widget("a"), widget("b", V2), widget("c")]
    # Upstream counts the object before checking it: the second one sent is "index 2".
    assert failure(server, ca, objects) == (
        f"conversion webhook for {V2}, Kind=WidgetList returned invalid converted object "
        "at index 2: must have the same name: c != renamed"
    )


def test_transport_failures_are_wrapped(ca: CertificateAuthority):
    port = free_port()
    assert failure(f"https://127.0.0.1:{port}/convert", ca, [widget()]) == (
        f'conversion webhook for {GVK} failed: Post "https://127.0.0.1:{port}/convert'
        f'?timeout=30s": dial tcp 127.0.0.1:{port}: connect: connection refused'
    )


def test_wrong_ca_is_a_tls_failure(cert: ServingCertificate, webhook: Webhook):
    with serve_webhook(cert, webhook) as server:
        message = failure(server, make_ca("other"), [widget()])
    assert message == (
        f'conversion webhook for {GVK} failed: Post "https://127.0.0.1:{server.port}/convert'
        '?timeout=30s": tls: failed to verify certificate: '
        "x509: certificate signed by unknown authority"
    )


def test_an_unusable_ca_bundle_fails_each_conversion_not_the_converter() -> None:
    """The CRD stays servable (and its objects deletable); converting answers the error."""

    async def main() -> str:
        converter = WebhookConverter(
            {"url": "https://127.0.0.1:1/convert", "caBundle": b"not a certificate"},
            ["v1"],
            WIDGET,
        )
        try:
            with pytest.raises(StatusError) as info:
                await converter.convert_object({"apiVersion": V1, "kind": "Widget"}, V2)
        finally:
            await converter.aclose()
        assert (info.value.code, info.value.reason) == (500, "")
        return info.value.message

    assert asyncio.run(main()) == (
        "conversion webhook for stable.example.com/v1, Kind=Widget failed: "
        "unable to load root certificates: unable to parse bytes as PEM block"
    )
