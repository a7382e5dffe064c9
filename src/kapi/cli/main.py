"""The ``kapi`` command: ``serve`` runs the API server, ``kubeconfig`` prints how to reach it,
and kubectl-like commands (``get``, ``apply``, ``explain``, ...) talk to it."""

from __future__ import annotations

import argparse
import logging
import socket
import sys
from pathlib import Path

from kapi.apimachinery.gotext import parse_go_duration
from kapi.apimachinery.validation import is_valid_label_value
from kapi.apis.core_v1_serviceaccounts import load_private_key
from kapi.apis.core_v1_services import ServiceNetwork
from kapi.cli import commands, kubeconfig, workers
from kapi.features import FeatureGate
from kapi.server import ServerConfig, serve
from kapi.version import DEFAULT_VERSION, Version

DEFAULT_DATA_DIR = Path(".kapi")


def _serve_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the API server")
    p.add_argument(
        "--bind-address",
        default="127.0.0.1",
        help="the IP address on which to listen (default 127.0.0.1)",
    )
    p.add_argument(
        "--secure-port",
        "--port",
        dest="port",
        type=int,
        default=6443,
        help="the port on which to serve (default 6443; 0 picks a free port)",
    )
    p.add_argument(
        "--data-dir",
        type=Path,
        default=DEFAULT_DATA_DIR,
        help="where the kubeconfig lives, and the embedded SQLite store unless "
        "--etcd-servers is given",
    )
    p.add_argument(
        "--feature-gates",
        default="",
        help="comma-separated Name=true|false pairs, as kube-apiserver's",
    )
    p.add_argument(
        "--emulated-version",
        default=str(DEFAULT_VERSION),
        help=f"the Kubernetes version whose API to serve (default {DEFAULT_VERSION})",
    )
    p.add_argument(
        "--sqlite-synchronous",
        choices=("NORMAL", "FULL"),
        default="NORMAL",
        help="NORMAL survives a process crash; FULL also survives a power loss",
    )
    p.add_argument(
        "--watch-bookmark-interval",
        type=float,
        default=60.0,
        help="seconds between BOOKMARK events on a quiet watch (default 60)",
    )
    p.add_argument(
        "--etcd-servers",
        action="append",
        default=[],
        metavar="URL[,URL...]",
        help="etcd client URLs (scheme://host:port), comma separated: keep the API's state "
        "in that etcd cluster, which several kapi servers may share; without it, kapi "
        "keeps its state in an embedded SQLite file under --data-dir",
    )
    p.add_argument(
        "--etcd-prefix",
        default="/registry",
        metavar="PREFIX",
        help="the etcd key under which every object is stored (default /registry)",
    )
    p.add_argument(
        "--etcd-compaction-interval",
        default="5m0s",
        metavar="DURATION",
        help="how often to compact storage history older than one interval (a Go duration, "
        "default 5m0s); 0 turns compaction off",
    )
    # kapi's former spelling, in seconds; kept working, no longer advertised.
    p.add_argument("--compaction-interval", type=float, default=None, help=argparse.SUPPRESS)
    p.add_argument(
        "--etcd-healthcheck-timeout",
        default="2s",
        metavar="DURATION",
        help="how long the etcd health check waits for storage to answer (default 2s)",
    )
    p.add_argument(
        "--etcd-startup-timeout",
        default="1m0s",
        metavar="DURATION",
        help="kapi-specific: how long start-up keeps trying to reach --etcd-servers before "
        "it exits with an error (a Go duration, default 1m0s)",
    )
    p.add_argument(
        "--identity-hostname",
        default="",
        metavar="NAME",
        help="kapi-specific: the host name this server's identity lease is named and "
        "labelled after (default: this machine's host name); give each server sharing "
        "one etcd its own",
    )
    p.add_argument(
        "--enable-storage-migrator",
        action="store_true",
        help="kapi-specific: run the storage migrator in this server: it carries out "
        "storagemigration.k8s.io StorageVersionMigrations one at a time, and creates one "
        "for a resource whose StorageVersion has a commonEncodingVersion while some of its "
        "stored objects are in another version (StorageVersionMigrator feature)",
    )
    p.add_argument(
        "--identity-lease-duration-seconds",
        type=int,
        metavar="SECONDS",
        default=3600,
        help="how long this server's identity lease stays valid without a renewal; "
        "expired identity leases are deleted, checked once per duration "
        "(default 3600; APIServerIdentity feature)",
    )
    p.add_argument(
        "--identity-lease-renew-interval-seconds",
        type=int,
        metavar="SECONDS",
        default=10,
        help="how often this server renews its identity lease (default 10; "
        "APIServerIdentity feature)",
    )
    p.add_argument(
        "--service-cluster-ip-range",
        default="10.0.0.0/24",
        metavar="CIDR",
        help="A CIDR notation IP range from which to assign service cluster IPs; two "
        "comma-separated CIDRs of different families for dual stack (default 10.0.0.0/24)",
    )
    p.add_argument(
        "--service-node-port-range",
        default="30000-32767",
        metavar="RANGE",
        help="A port range to reserve for services with NodePort visibility, "
        "e.g. '30000-32767' (inclusive; default 30000-32767)",
    )
    p.add_argument(
        "--advertise-address",
        default="",
        metavar="IP",
        help="The IP address the default kubernetes Endpoints and EndpointSlice name "
        "(default: the bind address if routable, else the default route's interface's)",
    )
    p.add_argument(
        "--service-account-issuer",
        default="https://kubernetes.default.svc.cluster.local",
        metavar="URL",
        help="The iss claim of service account tokens "
        "(default https://kubernetes.default.svc.cluster.local)",
    )
    p.add_argument(
        "--service-account-signing-key-file",
        default="",
        metavar="FILE",
        help="A PEM RSA or ECDSA P-256 private key signing service account tokens (default: "
        "one generated and kept in storage, shared by every server on it)",
    )
    p.add_argument(
        "--api-audiences",
        default="",
        metavar="LIST",
        help="Comma-separated default audiences of service account tokens (default: the issuer)",
    )
    p.add_argument(
        "--enable-garbage-collector",
        nargs="?",
        const="true",
        default="true",
        metavar="BOOL",
        help="Enables the generic garbage collector: deletes leave its finalizers, and this "
        "server runs it (kube-controller-manager does upstream). (default true)",
    )
    p.add_argument(
        "--event-ttl",
        default="1h0m0s",
        metavar="DURATION",
        help="Amount of time to retain events. (a Go duration, default 1h0m0s)",
    )
    p.add_argument(
        "--audit-log-path",
        default="",
        help="if set, requests are logged to this file as audit.k8s.io/v1 Event JSON lines; "
        "'-' means standard out",
    )
    p.add_argument(
        "--audit-policy-file",
        default="",
        help="path to the audit.k8s.io/v1 Policy deciding what is logged (none: nothing is)",
    )
    p.add_argument(
        "--audit-log-maxsize",
        type=int,
        default=0,
        help="the maximum size in megabytes of the audit log file before it gets rotated (0: 100)",
    )
    p.add_argument(
        "--audit-log-maxbackup",
        type=int,
        default=0,
        help="the maximum number of old audit log files to retain (0: all)",
    )
    p.add_argument(
        "--audit-log-maxage",
        type=int,
        default=0,
        help="the maximum number of days to retain old audit log files based on the "
        "timestamp encoded in their filename (0: forever)",
    )
    p.add_argument(
        "--read-header-timeout",
        default="32s",
        metavar="DURATION",
        help="kapi-specific: close a connection whose request line and headers have not "
        "arrived within this time (a Go duration, default 32s: kube-apiserver's fixed value)",
    )
    p.add_argument(
        "--idle-timeout",
        default="90s",
        metavar="DURATION",
        help="kapi-specific: close a kept-alive connection that sends no new request within "
        "this time (a Go duration, default 90s: kube-apiserver's fixed value)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="kapi-specific: serve from this many processes sharing the port (SO_REUSEPORT) "
        "and the store: the etcd of --etcd-servers, or else the SQLite file in --data-dir "
        "(default 1)",
    )
    p.add_argument(
        "--storage-versions",
        default="",
        metavar="GROUP/VERSION/RESOURCE[,...]",
        help="kapi-specific: store these resources in the given versions instead of their "
        "default storage version, comma separated (v1/configmaps for the core group), e.g. "
        "policy/v1beta1/poddisruptionbudgets, as a server of an older release would; "
        "reported in StorageVersion objects",
    )
    p.add_argument(
        "--storage-version-gc-period-seconds",
        type=int,
        default=60,
        metavar="SECONDS",
        help="kapi-specific: how often the elected server removes StorageVersion entries of "
        "API servers whose identity lease is gone or expired (default 60); it also does "
        "when an identity lease is deleted",
    )
    p.add_argument(
        "--hold-storage-version-registration",
        action="store_true",
        help="kapi-specific, for tests: register no storage version (built-in or CRD) until "
        "the process receives SIGUSR1; meanwhile writes to built-in resources get 503, new "
        "CRDs are not served and /readyz fails",
    )
    p.add_argument(
        "--leader-elect-lease-duration",
        default="15s",
        metavar="DURATION",
        help="how long a candidate for a leader lease (the storage version GC's, the "
        "migrator's) waits after "
        "the last observed renewal before taking it over (default 15s)",
    )
    p.add_argument(
        "--leader-elect-renew-deadline",
        default="10s",
        metavar="DURATION",
        help="how long a leader (storage version GC, migrator) keeps trying to renew its lease "
        "before it stops leading; less than the lease duration (default 10s)",
    )
    p.add_argument(
        "--leader-elect-retry-period",
        default="2s",
        metavar="DURATION",
        help="how long candidates for a leader lease (storage version GC, migrator) wait between "
        "attempts to acquire or renew it (default 2s)",
    )
    # Set by the supervising ``kapi serve --workers N`` on each worker's command line.
    p.add_argument("--worker-index", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--v", "-v", dest="verbosity", type=int, default=0, help="log verbosity")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kapi", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    _serve_parser(sub)
    kc = sub.add_parser("kubeconfig", help="print the kubeconfig of a server's data dir")
    kc.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    commands.register(parser, sub)
    args = parser.parse_args(argv)
    code = commands.run(args)
    if code is not None:
        return code
    if args.command == "kubeconfig":
        path = kubeconfig.path_for(args.data_dir)
        if not path.exists():
            print(f"error: no kubeconfig at {path}: start `kapi serve` first", file=sys.stderr)
            return 1
        sys.stdout.write(path.read_text())
        return 0
    return _serve(args, parser, sys.argv[1:] if argv is None else argv)


def _serve(args: argparse.Namespace, parser: argparse.ArgumentParser, argv: list[str]) -> int:
    logging.basicConfig(
        level=logging.DEBUG if args.verbosity >= 4 else logging.INFO,
        format="%(asctime)s %(levelname).1s %(name)s] %(message)s",
    )
    try:
        emulated = Version.parse(args.emulated_version)
    except ValueError as exc:
        parser.error(str(exc))
    if emulated > DEFAULT_VERSION:
        parser.error(f"emulated version {emulated} is newer than kapi's {DEFAULT_VERSION}")
    try:
        gates = FeatureGate.parse(args.feature_gates, emulated)
    except ValueError as exc:
        parser.error(str(exc))
    event_ttl = _duration_flag(parser, "event-ttl", args.event_ttl)
    collector = _bool_flag(parser, "enable-garbage-collector", args.enable_garbage_collector)
    read_header_timeout = _duration_flag(parser, "read-header-timeout", args.read_header_timeout)
    if read_header_timeout == 0:
        parser.error(
            f'invalid argument "{args.read_header_timeout}" for "--read-header-timeout" flag: '
            "must be positive"
        )
    idle_timeout = _duration_flag(parser, "idle-timeout", args.idle_timeout)
    if idle_timeout == 0:
        parser.error(
            f'invalid argument "{args.idle_timeout}" for "--idle-timeout" flag: must be positive'
        )
    compaction_interval = _duration_flag(
        parser, "etcd-compaction-interval", args.etcd_compaction_interval
    )
    if args.compaction_interval is not None:
        compaction_interval = max(args.compaction_interval, 0.0)
    etcd_servers = tuple(
        url.strip() for value in args.etcd_servers for url in value.split(",") if url.strip()
    )
    healthcheck_timeout = _duration_flag(
        parser, "etcd-healthcheck-timeout", args.etcd_healthcheck_timeout
    )
    startup_timeout = _duration_flag(parser, "etcd-startup-timeout", args.etcd_startup_timeout)
    lease_duration = _duration_flag(
        parser, "leader-elect-lease-duration", args.leader_elect_lease_duration
    )
    renew_deadline = _duration_flag(
        parser, "leader-elect-renew-deadline", args.leader_elect_renew_deadline
    )
    retry_period = _duration_flag(
        parser, "leader-elect-retry-period", args.leader_elect_retry_period
    )
    if lease_duration <= renew_deadline:
        parser.error(
            "--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline"
        )
    if renew_deadline <= 1.2 * retry_period:
        parser.error(
            "--leader-elect-renew-deadline must be greater than 1.2 times "
            "--leader-elect-retry-period"
        )
    if args.storage_version_gc_period_seconds <= 0:
        parser.error("--storage-version-gc-period-seconds must be a positive number")
    try:
        storage_versions = _storage_versions(args.storage_versions, gates, emulated)
    except ValueError as exc:
        parser.error(f"--storage-versions: {exc}")
    try:
        ServiceNetwork.parse(args.service_cluster_ip_range, args.service_node_port_range)
    except ValueError as exc:
        parser.error(str(exc))
    if args.service_account_signing_key_file:
        try:
            load_private_key(Path(args.service_account_signing_key_file).read_bytes())
        except (OSError, ValueError) as exc:
            parser.error(f"--service-account-signing-key-file: {exc}")
    workers_error = _workers_error(args)
    if workers_error:
        parser.error(workers_error)
    port = args.port
    if port == 0:
        from kapi.server import free_port

        port = free_port(args.bind_address)
    config = ServerConfig(
        bind_address=args.bind_address,
        port=port,
        data_dir=args.data_dir,
        feature_gates=gates,
        emulated_version=emulated,
        sqlite_synchronous=args.sqlite_synchronous,
        sqlite_shared=args.worker_index is not None,
        bookmark_interval=args.watch_bookmark_interval,
        compaction_interval=compaction_interval,
        etcd_servers=etcd_servers,
        etcd_prefix=args.etcd_prefix,
        etcd_startup_timeout=startup_timeout,
        etcd_healthcheck_timeout=healthcheck_timeout,
        identity_hostname=args.identity_hostname,
        identity_lease_duration_seconds=args.identity_lease_duration_seconds,
        identity_lease_renew_interval_seconds=args.identity_lease_renew_interval_seconds,
        event_ttl=event_ttl,
        enable_garbage_collector=collector,
        audit_log_path=args.audit_log_path,
        audit_policy_file=args.audit_policy_file,
        audit_log_maxsize=args.audit_log_maxsize,
        audit_log_maxbackup=args.audit_log_maxbackup,
        audit_log_maxage=args.audit_log_maxage,
        read_header_timeout=read_header_timeout,
        idle_timeout=idle_timeout,
        # With --workers, worker 0 alone runs the migrator: one run per migration.
        enable_storage_migrator=args.enable_storage_migrator and args.worker_index in (None, 0),
        storage_versions=storage_versions,
        storage_version_gc_period=float(args.storage_version_gc_period_seconds),
        hold_storage_version_registration=args.hold_storage_version_registration,
        leader_elect_lease_duration=lease_duration,
        leader_elect_renew_deadline=renew_deadline,
        leader_elect_retry_period=retry_period,
        service_cluster_ip_range=args.service_cluster_ip_range,
        service_node_port_range=args.service_node_port_range,
        advertise_address=args.advertise_address,
        service_account_issuer=args.service_account_issuer,
        service_account_signing_key_file=args.service_account_signing_key_file,
        api_audiences=tuple(a.strip() for a in args.api_audiences.split(",") if a.strip()),
    )
    config_errors = _identity_config_errors(args)
    audit_error = _audit_config_error(args)
    if audit_error:
        config_errors.append(audit_error)
    if config_errors:
        print(f"Error: {_aggregate(config_errors)}", file=sys.stderr)
        return 1
    if args.worker_index is not None:  # one of ``--workers N``: the parent said it all
        workers.stop_with_parent()
        return serve(config, reuse_port=True)
    path = kubeconfig.write(config.data_dir, f"http://{_host(args.bind_address)}:{port}")
    print(f"kapi serving on http://{_host(args.bind_address)}:{port}", flush=True)
    print(f"kubeconfig written to {path}", flush=True)
    if args.workers > 1:
        hostname = args.identity_hostname or socket.gethostname()
        return workers.run_workers(argv, args.workers, port, hostname)
    return serve(config)


def _storage_versions(
    text: str, gates: FeatureGate, emulated: Version
) -> tuple[tuple[str, str, str], ...]:
    """``--storage-versions`` as (group, resource, version), checked against the built-ins."""
    if not text.strip():
        return ()
    from kapi.apis import builtin_resources
    from kapi.runtime.scheme import Scheme
    from kapi.storageversion.resources import parse_storage_versions

    scheme = Scheme(emulated)
    for resource in builtin_resources(gates):
        scheme.add(resource)
    chosen = parse_storage_versions(text, scheme)
    return tuple((group, plural, version) for (group, plural), version in chosen.items())


def _workers_error(args: argparse.Namespace) -> str:
    """Why ``--workers`` cannot be honoured with the other flags (empty: it can)."""
    if args.workers < 1:
        return f"--workers must be at least 1, got {args.workers}"
    if args.workers == 1:
        return ""
    if args.audit_log_path not in ("", "-"):
        return (
            "--workers > 1 cannot write one --audit-log-path file from several processes "
            "(its rotation is per process); use '-' or one worker"
        )
    return ""


#: ``strconv.ParseBool``'s spellings, which pflag's bool flags take.
_GO_BOOLS = {
    **dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
    **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False),
}


def _bool_flag(parser: argparse.ArgumentParser, name: str, value: str) -> bool:
    """A bool flag's value (``--x``, ``--x=false``); other text is pflag's usage error."""
    if value not in _GO_BOOLS:
        parser.error(
            f'invalid argument "{value}" for "--{name}" flag: strconv.ParseBool: '
            f'parsing "{value}": invalid syntax'
        )
    return _GO_BOOLS[value]


def _duration_flag(parser: argparse.ArgumentParser, name: str, value: str) -> float:
    """A duration flag's seconds; a value Go cannot parse, or a negative one, is a usage error.

    The message is pflag's, as kube-apiserver prints it for ``--event-ttl=abc``.
    """
    try:
        seconds = parse_go_duration(value)
    except ValueError as exc:
        parser.error(f'invalid argument "{value}" for "--{name}" flag: {exc}')
    if seconds < 0:
        parser.error(f'invalid argument "{value}" for "--{name}" flag: must not be negative')
    return seconds


def _identity_config_errors(args: argparse.Namespace) -> list[str]:
    """Upstream's checks of the identity lease flags, with its messages."""
    errs: list[str] = []
    for flag in ("identity-lease-duration-seconds", "identity-lease-renew-interval-seconds"):
        value = getattr(args, flag.replace("-", "_"))
        if value <= 0:
            errs.append(f"--{flag} should be a positive number, but value '{value}' provided")
    # kapi-specific: the name becomes the lease's kubernetes.io/hostname label.
    hostname = args.identity_hostname
    if hostname:
        problems = is_valid_label_value(hostname)
        if problems:
            errs.append(
                f'--identity-hostname "{hostname}" is not a valid label value: '
                + "; ".join(problems)
            )
    return errs


def _aggregate(messages: list[str]) -> str:
    """Several errors as apimachinery's aggregate prints them: one bare, more in brackets."""
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


def _audit_config_error(args: argparse.Namespace) -> str:
    """Upstream's start-up checks of the audit flags, with its messages (empty: all good)."""
    if not args.audit_log_path:
        return ""
    for flag in ("maxage", "maxbackup", "maxsize"):
        value = getattr(args, f"audit_log_{flag}")
        if value < 0:
            return f"--audit-log-{flag} {value} can't be a negative number"
    if args.audit_policy_file:
        from kapi.audit import PolicyError, load_policy_file

        try:
            load_policy_file(args.audit_policy_file)
        except PolicyError as exc:
            return str(exc)
    return ""


def _host(address: str) -> str:
    if address in ("0.0.0.0", ""):
        return "127.0.0.1"
    return f"[{address}]" if ":" in address else address


if __name__ == "__main__":
    sys.exit(main())
