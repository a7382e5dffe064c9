"""The metrics registry's exposition: upstream's series, and only those."""

from __future__ import annotations

from prometheus_client import generate_latest

from kapi.endpoints.metrics import APIServerMetrics


def test_counters_have_no_created_series() -> None:
    """component-base exposes no ``*_created`` series beside its counters and histograms."""
    metrics = APIServerMetrics()
    metrics.count_ratcheted("example.com", "widgets", "cel", 2)
    metrics.observe_ratcheting(0.0003)
    text = generate_latest(metrics.registry).decode()
    assert "_created" not in text
    assert (
        'kapi_validation_ratcheted_errors_total{group="example.com",resource="widgets",'
        'source="cel"} 2.0' in text
    )


def test_ratcheting_histogram_has_upstreams_buckets() -> None:
    metrics = APIServerMetrics()
    metrics.observe_ratcheting(0.00003)
    text = generate_latest(metrics.registry).decode()
    bounds = [
        line.split('le="')[1].split('"')[0]
        for line in text.splitlines()
        if line.startswith("apiextensions_apiserver_validation_ratcheting_seconds_bucket")
    ]
    # ExponentialBuckets(0.00001, 4, 10), then +Inf.
    assert bounds == [
        "1e-05", "4e-05", "0.00016", "0.00064", "0.00256",
        "0.01024", "0.04096", "0.16384", "0.65536", "2.62144", "+Inf",
    ]  # fmt: skip
    assert 'apiextensions_apiserver_validation_ratcheting_seconds_bucket{le="4e-05"} 1.0' in text
    assert 'apiextensions_apiserver_validation_ratcheting_seconds_bucket{le="1e-05"} 0.0' in text
