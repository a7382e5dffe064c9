"""The metrics registry's exposition: upstream's series, and only those."""

from __future__ import annotations

import pytest
from prometheus_client import generate_latest

from kapi.endpoints.metrics import APIServerMetrics, PlainCounter


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


MIGRATOR = "storage_migrator_core_migrator"


def test_storage_migrator_series_keep_upstreams_names_and_labels() -> None:
    """The out-of-tree migrator's counters carry no ``_total``; ``Status`` is capitalised."""
    metrics = APIServerMetrics()
    empty = metrics.render().decode()
    for name, kind in [
        ("migrated_objects", "counter"),
        ("remaining_objects", "gauge"),
        ("migrations", "counter"),
    ]:
        assert f"# TYPE {MIGRATOR}_{name} {kind}\n" in empty
        assert f"# HELP {MIGRATOR}_{name} " in empty
    assert f"{MIGRATOR}_migrations_total" not in empty
    assert f"{MIGRATOR}_migrated_objects_total" not in empty

    metrics.observe_objects_migrated("poddisruptionbudgets.policy", 3)
    metrics.observe_objects_migrated("poddisruptionbudgets.policy", 2)
    metrics.observe_objects_remaining("poddisruptionbudgets.policy", 7)
    metrics.observe_migration("poddisruptionbudgets.policy", succeeded=True)
    metrics.observe_migration("widgets.example.com", succeeded=False)
    lines = metrics.render().decode().splitlines()
    assert f'{MIGRATOR}_migrated_objects{{resource="poddisruptionbudgets.policy"}} 5.0' in lines
    assert f'{MIGRATOR}_remaining_objects{{resource="poddisruptionbudgets.policy"}} 7.0' in lines
    assert (
        f'{MIGRATOR}_migrations{{Status="Succeeded",resource="poddisruptionbudgets.policy"}} 1.0'
        in lines
    )
    assert f'{MIGRATOR}_migrations{{Status="Failed",resource="widgets.example.com"}} 1.0' in lines


def test_plain_counter_escapes_and_refuses_what_a_counter_cannot_do() -> None:
    counter = PlainCounter("x_events", "Events.", ("what",))
    counter.inc('a "quoted"\\value\nnext')
    assert (
        counter.exposition().splitlines()[-1]
        == 'x_events{what="a \\"quoted\\"\\\\value\\nnext"} 1.0'
    )
    with pytest.raises(ValueError, match="only goes up"):
        counter.inc("a", amount=-1)
    with pytest.raises(ValueError, match="takes labels"):
        counter.inc()
