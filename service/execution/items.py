"""A chunk's items with what the decision log keys them by: content hashes, the verdict cache
key and the decision id (stable per request, item and version, so retries log nothing twice)."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass

from service.contract import ChunkItem, ChunkRequest
from service.verifiers.registry import canonical_json

DECISION_NAMESPACE = uuid.UUID("6f1c1b7e-4d0a-4c55-9a8e-2f6f7a2d9b10")


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


_LOW_80 = (1 << 80) - 1
_MS_48 = (1 << 48) - 1
# RFC 9562 version 8 (custom layout) and the variant bits, over the 80 low bits of the hash.
_V8 = (0x8 << 76) | (0b10 << 62)
_V8_MASK = ~((0xF << 76) | (0b11 << 62)) & _LOW_80


def decision_id(
    tenant_id: str,
    request_id: str,
    item_index: int,
    version_hash: str,
    issued_ms: int | None = None,
) -> uuid.UUID:
    """Stable per tenant, request, item and version: a retry finds what it logged before.

    ``issued_ms``, the time the request was first accepted (kept with its idempotency claim, so
    a retry and a redelivered chunk give the same one), leads the id: RFC 9562 version 8, the
    48-bit millisecond time as in version 7, the rest from the name's hash. Ids then grow with
    time, and the decision log's primary key index takes each chunk's rows at its right edge
    instead of at random pages (a random key dirties a page of it per row written). None: a
    request accepted before ids held a time, whose decisions have the plain name-based id.
    """
    name = f"{tenant_id}\x00{request_id}\x00{item_index}\x00{version_hash}"
    hashed = uuid.uuid5(DECISION_NAMESPACE, name)
    if issued_ms is None:
        return hashed
    return uuid.UUID(int=((issued_ms & _MS_48) << 80) | (hashed.int & _V8_MASK) | _V8)


@dataclass(frozen=True, slots=True)
class PreparedItem:
    item: ChunkItem
    decision_id: uuid.UUID
    prompt_hash: str | None
    completion_hash: str
    ground_truth_hash: str
    # Same version, completion, ground truth and prompt → same verdict (verifiers are pure).
    cache_key: str

    @property
    def group_key(self) -> str:
        """The item's group; an item without one is a group of its own."""
        group_id = self.item.group_id
        return group_id if group_id is not None else f"\x00{self.item.index}"


def prepare_items(chunk: ChunkRequest) -> list[PreparedItem]:
    version_hash, tenant_id = chunk.verifier.version_hash, chunk.tenant_id
    issued_ms = chunk.issued_ms
    prepared = []
    for item in chunk.items:
        prompt_hash = sha256(item.prompt) if item.prompt is not None else None
        completion_hash = sha256(item.completion)
        ground_truth_hash = sha256(canonical_json(item.ground_truth))
        # Per tenant: whether another team sent the same completion is not for anyone to see.
        cache_key = sha256(
            f"{tenant_id}\x00{version_hash}\x00{completion_hash}\x00"
            f"{ground_truth_hash}\x00{prompt_hash or ''}"
        )
        prepared.append(
            PreparedItem(
                item=item,
                decision_id=decision_id(
                    tenant_id, chunk.request_id, item.index, version_hash, issued_ms
                ),
                prompt_hash=prompt_hash,
                completion_hash=completion_hash,
                ground_truth_hash=ground_truth_hash,
                cache_key=cache_key,
            )
        )
    return prepared
