"""Ranges of values (service IPs, node ports) shared by every server on one store.

Each value in use is one key in storage, created with storage's create-if-absent
(an etcd transaction on the key's absence, a unique insert on SQLite): the
create succeeds for exactly one caller whichever server it runs on, so two
servers can never hand out the same value, with no lock and no retry loop.
Releasing a value deletes its key.  This is how upstream's current ClusterIP
allocator works (one ``IPAddress`` object per IP, created or refused by the
store); kapi uses it for node ports too, instead of upstream's bitmap in one
etcd key, which every allocation would rewrite and race on.

The key holds its owner (``namespace/name``), for the repair pass to find
reservations whose owner is gone (a server that stopped between reserving and
writing the owner leaks one) and owners whose reservation is missing.  Nothing
here is served through the API; the keys live under ``/registry/kapi.io/``
(``--etcd-prefix`` replaces ``/registry``).
"""

from __future__ import annotations

import ipaddress
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass

import orjson

from kapi.storage.interface import KeyExistsError, KeyNotFoundError, Storage

#: Where the reservations live: one key per value under each range's prefix.
SERVICE_IPS_PREFIX = "/registry/kapi.io/serviceips/"
NODE_PORTS_PREFIX = "/registry/kapi.io/servicenodeports/"

#: Upstream's allocator errors (``ipallocator`` and ``portallocator``), word for word.
IP_ALLOCATED = "provided IP is already allocated"
PORT_ALLOCATED = "provided port is already allocated"
RANGE_FULL = "range is full"


class AllocationError(Exception):
    """A value could not be reserved; ``str()`` is upstream's text."""


class AllocatedError(AllocationError):
    pass


class NotInRangeError(AllocationError):
    pass


class FullError(AllocationError):
    def __init__(self) -> None:
        super().__init__(RANGE_FULL)


IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class IPRange:
    """A service CIDR, as upstream's allocator uses it.

    The network address is never handed out, nor IPv4's broadcast address.
    Dynamic allocation prefers the upper part of the range and leaves the lower
    part (``offset`` addresses, KEP-3070) to clients that ask for an IP.
    """

    network: ipaddress.IPv4Network | ipaddress.IPv6Network

    @classmethod
    def parse(cls, cidr: str) -> IPRange:
        """``10.0.0.0/24`` or ``fd00::/108``; raises ValueError on anything else."""
        network = ipaddress.ip_network(cidr.strip(), strict=False)
        if network.version == 6 and network.prefixlen < 64:
            raise ValueError(
                f"shortest allowed prefix length for service CIDR is 64, got {network.prefixlen}"
            )
        if network.num_addresses < 4 and network.version == 4:
            raise ValueError(f"service CIDR {network} has no usable address")
        return cls(network)

    @property
    def family(self) -> str:
        return "IPv4" if self.network.version == 4 else "IPv6"

    @property
    def first(self) -> int:
        return int(self.network.network_address) + 1

    @property
    def last(self) -> int:
        broadcast = int(self.network.broadcast_address)
        return broadcast - 1 if self.network.version == 4 else broadcast

    @property
    def size(self) -> int:
        return self.last - self.first + 1

    @property
    def offset(self) -> int:
        """Upstream's ``calculateRangeOffset``: 16 <= size/16 <= 256, none for tiny ranges."""
        if self.size < 16:
            return 0
        return min(max(16, self.size // 16), 256)

    def address(self, value: int) -> IPAddress:
        return (
            ipaddress.ip_address(value)
            if self.network.version == 4
            else ipaddress.IPv6Address(value)
        )

    def first_address(self) -> str:
        """The range's first usable IP: the default ``kubernetes`` Service's."""
        return str(self.address(self.first))

    def contains(self, ip: IPAddress) -> bool:
        return ip.version == self.network.version and self.first <= int(ip) <= self.last

    def not_in_range(self, ip: str) -> NotInRangeError:
        return NotInRangeError(
            f"the provided IP ({ip}) is not in the valid range. "
            f"The range of valid IPs is {self.network}"
        )

    def candidates(self, rng: random.Random) -> Iterator[str]:
        """Every address, from a random place in the upper part, then the lower part."""
        upper = (self.first + self.offset, self.last)
        lower = (self.first, self.first + self.offset - 1)
        for low, high in (upper, lower):
            if high < low:
                continue
            count = high - low + 1
            start = rng.randrange(count)
            for i in range(count):
                yield str(self.address(low + (start + i) % count))

    def __str__(self) -> str:
        return str(self.network)


@dataclass(frozen=True)
class PortRange:
    """A node port range, ``30000-32767`` (upstream's ``net.PortRange``)."""

    base: int
    size: int

    @classmethod
    def parse(cls, text: str) -> PortRange:
        """``30000-32767``, or ``30000+2768``, or one port; raises ValueError otherwise."""
        text = text.strip()
        try:
            if "-" in text:
                low, high = (int(p) for p in text.split("-", 1))
            elif "+" in text:
                low, extra = (int(p) for p in text.split("+", 1))
                high = low + extra
            else:
                low = high = int(text)
        except ValueError:
            raise ValueError(f"unable to parse port range: {text}") from None
        if not (0 <= low <= high <= 65535):
            raise ValueError(f"invalid port range: {text}")
        return cls(low, high - low + 1)

    @property
    def last(self) -> int:
        return self.base + self.size - 1

    @property
    def offset(self) -> int:
        """KEP-3668: the lower band left to static requests, 16 <= size/32 <= 128."""
        if self.size < 16:
            return 0
        return min(max(16, self.size // 32), 128)

    def contains(self, port: int) -> bool:
        return self.base <= port <= self.last

    def not_in_range(self) -> NotInRangeError:
        return NotInRangeError(
            f"provided port is not in the valid range. The range of valid ports is {self}"
        )

    def candidates(self, rng: random.Random) -> Iterator[int]:
        upper = (self.base + self.offset, self.last)
        lower = (self.base, self.base + self.offset - 1)
        for low, high in (upper, lower):
            if high < low:
                continue
            count = high - low + 1
            start = rng.randrange(count)
            for i in range(count):
                yield low + (start + i) % count

    def __str__(self) -> str:
        return f"{self.base}-{self.last}"


@dataclass(frozen=True)
class Reservation:
    """One reserved value and who holds it."""

    value: str
    owner: str
    #: When it was made (seconds since the epoch): the repair pass spares fresh ones.
    created: float
    revision: int


class Reservations:
    """The reserved values of one range, as keys under ``prefix`` in ``storage``."""

    def __init__(self, storage: Storage, prefix: str, allocated_text: str) -> None:
        self.storage = storage
        self.prefix = prefix
        self.allocated_text = allocated_text
        self._rng = random.Random()

    def key(self, value: str) -> str:
        return self.prefix + value

    async def reserve(self, value: str, owner: str) -> None:
        """Reserve ``value`` for ``owner``; :class:`AllocatedError` when anyone holds it."""
        body = orjson.dumps({"owner": owner, "created": time.time()})
        try:
            await self.storage.create(self.key(value), body)
        except KeyExistsError:
            raise AllocatedError(self.allocated_text) from None

    async def is_free(self, value: str) -> bool:
        return await self.storage.get(self.key(value)) is None

    async def reserve_next(self, candidates: Iterator[str], owner: str) -> str:
        """The first free candidate, reserved; a value another server takes between the
        look and the create is skipped, as upstream's allocator skips a mid-air collision."""
        for value in candidates:
            if not await self.is_free(value):
                continue
            try:
                await self.reserve(value, owner)
            except AllocatedError:
                continue
            return value
        raise FullError()

    async def next_free(self, candidates: Iterator[str]) -> str:
        """A free candidate, not reserved (dry run)."""
        for value in candidates:
            if await self.is_free(value):
                return value
        raise FullError()

    async def release(self, value: str, owner: str | None = None) -> None:
        """Free ``value``; with ``owner``, only while that owner holds it."""
        kv = await self.storage.get(self.key(value))
        if kv is None:
            return
        if owner is not None and orjson.loads(kv.value).get("owner") != owner:
            return
        try:
            await self.storage.delete(self.key(value), kv.mod_revision)
        except (KeyNotFoundError, Exception):
            # Gone already, or changed hands since the read: either way not ours to free.
            return

    async def all(self) -> list[Reservation]:
        out: list[Reservation] = []
        start: str | None = None
        while True:
            result = await self.storage.list(self.prefix, start_key=start, limit=500)
            for kv in result.kvs:
                data = orjson.loads(kv.value)
                out.append(
                    Reservation(
                        kv.key[len(self.prefix) :],
                        str(data.get("owner", "")),
                        float(data.get("created", 0)),
                        kv.mod_revision,
                    )
                )
            if not result.more:
                return out
            start = result.kvs[-1].key + "\x00"

    @property
    def rng(self) -> random.Random:
        return self._rng
