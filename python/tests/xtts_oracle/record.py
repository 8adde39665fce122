"""The record codec (formats/cache.md 3.1 to 3.3): parse and check a stored record's
header, decode its tokens and mel, and the lengths index entry.

Every check the C reader makes on a record is made here (header CRC-32, shape, section
and zstd checksums); damage raises CacheError without shard context (XttsCache adds the
shard, the index and the id). Needs numpy, and zstandard (imported when a record is first
decoded, _fallback.py).
"""

from __future__ import annotations

import math
import struct
import zlib
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Optional, Tuple, Union

import numpy as np
if TYPE_CHECKING:   # numpy.typing is numpy 1.20 or later (Debian 11 has 1.19): for annotations only
    import numpy.typing as npt

from . import _fallback
from xtts_prep.manifest import CacheError

if TYPE_CHECKING:
    import zstandard

__all__ = ["record_error", "RECORD_MAGIC", "RECORD_VERSION", "MAX_ID", "MAX_TOKENS", "MAX_FRAMES", "MAX_MELS", "PAYLOAD_MAX",
           "FLAG_SHUFFLED", "DTYPE_F32", "DTYPE_F16", "LENGTH_FIELDS", "LENGTH_DTYPE", "Section", "RecordHeader",
           "RecordHeaderV1", "RecordHeaderV2", "Header", "parse_record_header", "parse_header", "decode_stored",
           "decode_record", "section_bytes", "unshuffle", "record_key"]

RECORD_MAGIC = b"XTRC"
RECORD_VERSION = 1
MAX_ID = 1024
MAX_TOKENS = 65536
MAX_FRAMES = 1048576
MAX_MELS = 1024
PAYLOAD_MAX = 1 << 30
FLAG_SHUFFLED = 0x01
DTYPE_F32, DTYPE_F16 = 0, 1
# formats/record.c: 64-byte little-endian header (CRC-32 of the zstd frame at 56, CRC-32
# of bytes 0..59 and the id at 60), then the id, then one zstd frame.
_HEADER = struct.Struct("<4sHBBHBBHHIIIIIIIIIfII")
assert _HEADER.size == 64
# a version-2 section table entry: kind, codec, flags, 0, stored, raw, crc32
_SECTION = struct.Struct("<BBBBIII")

# the lengths index (formats/cache.md 3.3): one 24-byte entry a record
LENGTH_STRUCT = struct.Struct("<IIIIIBBH")
LENGTH_FIELDS = ("n_frames", "n_tokens", "n_samples", "speaker_id", "lang_id", "split", "flags")
LENGTH_DTYPE = np.dtype([(f, np.uint8 if f in ("split", "flags") else np.uint32) for f in LENGTH_FIELDS])

_SECTION_NAMES = ("", "tokens", "mel", "text", "waveform")


def record_key(n: int) -> bytes:
    """The "records" / "lengths" key of local index n: 8 bytes, big-endian."""
    return struct.pack(">Q", n)


@dataclass
class Section:
    """One entry of a version-2 record's section table; offset is where its body starts
    in the stored record."""
    kind: int
    codec: int
    flags: int
    offset: int
    stored: int
    raw: int
    crc: int

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in _SECTION_KEYS}


@dataclass
class RecordHeader:
    """The header fields both record versions hold (checked, id decoded)."""
    id: str
    version: int
    dtype: int
    flags: int
    n_mels: int
    split: int
    id_len: int
    n_tokens: int
    tokens_padded: int
    n_frames: int
    frames_padded: int
    speaker_id: int
    lang_id: int
    n_samples: int
    pad_value: float

    def _common(self) -> dict[str, Any]:
        """The shared fields in their order, pad_value left for each version to place."""
        return {name: getattr(self, name) for name in _COMMON_KEYS}


_SECTION_KEYS = tuple(f.name for f in fields(Section))
_COMMON_KEYS = tuple(f.name for f in fields(RecordHeader) if f.name != "pad_value")


@dataclass
class RecordHeaderV1(RecordHeader):
    """A version-1 record: one zstd frame of payload_bytes (tokens, then the padded mel)."""
    payload_bytes: int
    frame_bytes: int
    frame_crc: int

    def as_dict(self) -> dict[str, Any]:
        """The header as parse_header returns it."""
        d = self._common()
        d.update(payload_bytes=self.payload_bytes, frame_bytes=self.frame_bytes, pad_value=self.pad_value,
                 frame_crc=self.frame_crc)
        return d


@dataclass
class RecordHeaderV2(RecordHeader):
    """A version-2 record: tokens, mel, text and optionally waveform sections."""
    pad_token: int
    trim_start: int
    sections: Tuple[Section, ...]
    audio: str

    def as_dict(self) -> dict[str, Any]:
        """The header as parse_header returns it."""
        d = self._common()
        d.update(pad_token=self.pad_token, trim_start=self.trim_start, pad_value=self.pad_value,
                 sections=[s.as_dict() for s in self.sections], audio=self.audio)
        return d


Header = Union[RecordHeaderV1, RecordHeaderV2]


def parse_record_header(buf: bytes) -> Header:
    """Parse and check a record's header and id (no decompression). Raises CacheError
    (without shard context) on damage."""
    if len(buf) < 64:
        raise CacheError("record truncated: %d bytes, header needs 64" % len(buf))
    (magic, version, dtype, flags, n_mels, split, _r1, id_len, _r2, n_tokens, tokens_padded, n_frames,
     frames_padded, speaker_id, lang_id, n_samples, payload_bytes, frame_bytes, pad_value, frame_crc,
     crc) = _HEADER.unpack_from(buf, 0)
    if magic != RECORD_MAGIC:
        raise CacheError("bad record magic")
    if id_len > MAX_ID or 64 + id_len > len(buf):
        raise CacheError("record id length %d does not fit %d bytes" % (id_len, len(buf)))
    if zlib.crc32(bytes(buf[64:64 + id_len]), zlib.crc32(bytes(buf[:60]))) != crc:
        raise CacheError("record header checksum mismatch")
    rid = bytes(buf[64:64 + id_len]).decode("utf-8", "replace")
    if version == 2:
        return _parse_v2(buf, rid, dtype, flags, n_mels, split, _r1, id_len, _r2, n_tokens, tokens_padded,
                         n_frames, frames_padded, speaker_id, lang_id, n_samples, payload_bytes, frame_bytes,
                         pad_value, frame_crc)
    if version != RECORD_VERSION:
        raise CacheError("record '%s': version %d, this reader reads %d" % (rid, version, RECORD_VERSION))
    if dtype > DTYPE_F16 or flags & ~FLAG_SHUFFLED or split > 1:
        raise CacheError("record '%s': bad dtype, flags or split" % rid)
    if not 0 < n_mels <= MAX_MELS or tokens_padded > MAX_TOKENS or frames_padded > MAX_FRAMES:
        raise CacheError("record '%s': shape out of limits" % rid)
    if n_tokens > tokens_padded or n_frames > frames_padded:
        raise CacheError("record '%s': lengths (%d tokens, %d frames) exceed padded shape (%d, %d)"
                         % (rid, n_tokens, n_frames, tokens_padded, frames_padded))
    esize = 2 if dtype == DTYPE_F16 else 4
    expect = tokens_padded * 4 + n_mels * frames_padded * esize
    if expect > PAYLOAD_MAX:
        raise CacheError("record '%s': payload of %d bytes over the limit" % (rid, expect))
    if payload_bytes != expect:
        raise CacheError("record '%s': payload size %d, shape says %d" % (rid, payload_bytes, expect))
    if 64 + id_len + frame_bytes != len(buf):
        raise CacheError("record '%s': %d bytes stored, header says %d" % (rid, len(buf), 64 + id_len + frame_bytes))
    if not math.isfinite(pad_value):
        raise CacheError("record '%s': pad value is not finite" % rid)
    return RecordHeaderV1(id=rid, version=version, dtype=dtype, flags=flags, n_mels=n_mels, split=split,
                          id_len=id_len, n_tokens=n_tokens, tokens_padded=tokens_padded, n_frames=n_frames,
                          frames_padded=frames_padded, speaker_id=speaker_id, lang_id=lang_id, n_samples=n_samples,
                          pad_value=pad_value, payload_bytes=payload_bytes, frame_bytes=frame_bytes,
                          frame_crc=frame_crc)


def _parse_v2(buf: bytes, rid: str, dtype: int, flags: int, n_mels: int, split: int, n_sec: int, id_len: int,
              reserved: int, n_tokens: int, tokens_padded: int, n_frames: int, frames_padded: int, speaker_id: int,
              lang_id: int, n_samples: int, pad_token: int, trim_start: int, pad_value: float,
              table_crc: int) -> RecordHeaderV2:
    """Record version 2 (formats/cache.md 3.2): header fields at the version-1 offsets,
    44 pad_token, 48 trim_start, 56 the section table's CRC-32, then the id, a table of
    16-byte entries (kind, codec, flags, 0, stored, raw, crc32) and the bodies."""
    if dtype > DTYPE_F16 or flags & ~FLAG_SHUFFLED or split > 1 or reserved:
        raise CacheError("record '%s': bad dtype, flags, split or reserved field" % rid)
    if n_sec not in (3, 4):
        raise CacheError("record '%s': %d sections (3 or 4 expected)" % (rid, n_sec))
    tab = 64 + id_len
    if tab + 16 * n_sec > len(buf):
        raise CacheError("record '%s': section table does not fit %d bytes" % (rid, len(buf)))
    if zlib.crc32(bytes(buf[tab:tab + 16 * n_sec])) != table_crc:
        raise CacheError("record '%s': section table checksum mismatch" % rid)
    if not 0 < n_mels <= MAX_MELS or tokens_padded > MAX_TOKENS or frames_padded > MAX_FRAMES:
        raise CacheError("record '%s': shape out of limits" % rid)
    if n_tokens > tokens_padded or n_frames > frames_padded:
        raise CacheError("record '%s': lengths (%d tokens, %d frames) exceed padded shape (%d, %d)"
                         % (rid, n_tokens, n_frames, tokens_padded, frames_padded))
    esize = 2 if dtype == DTYPE_F16 else 4
    want_raw = [4 * n_tokens, n_mels * n_frames * esize, None, 2 * n_samples]
    off = tab + 16 * n_sec
    sections = []
    for i in range(n_sec):
        kind, codec, sflags, r0, stored, raw, crc = _SECTION.unpack_from(buf, tab + 16 * i)
        ok = kind == i + 1 and r0 == 0
        if i < 3:
            ok = ok and codec == 1 and sflags == ((flags & FLAG_SHUFFLED) if i == 1 else 0)
        else:
            ok = ok and ((codec == 1 and sflags == FLAG_SHUFFLED) or (codec == 2 and sflags == 0))
        if i == 2:
            ok = ok and 4 <= raw <= 4 + 2 * 65536
        if not ok:
            raise CacheError("record '%s': section %d: bad kind, codec or flags" % (rid, i))
        want = want_raw[i]
        if want is not None and (raw != want or raw > PAYLOAD_MAX):
            raise CacheError("record '%s': section %d: %d decoded bytes, the header says %d" % (rid, i, raw, want))
        sections.append(Section(kind=kind, codec=codec, flags=sflags, offset=off, stored=stored, raw=raw, crc=crc))
        off += stored
    if off != len(buf):
        raise CacheError("record '%s': %d bytes stored, header says %d" % (rid, len(buf), off))
    if not math.isfinite(pad_value):
        raise CacheError("record '%s': pad value is not finite" % rid)
    return RecordHeaderV2(id=rid, version=2, dtype=dtype, flags=flags, n_mels=n_mels, split=split, id_len=id_len,
                          n_tokens=n_tokens, tokens_padded=tokens_padded, n_frames=n_frames,
                          frames_padded=frames_padded, speaker_id=speaker_id, lang_id=lang_id, n_samples=n_samples,
                          pad_value=pad_value, pad_token=pad_token, trim_start=trim_start, sections=tuple(sections),
                          audio=("none", "int16", "flac")[0 if n_sec == 3 else sections[3].codec])


def parse_header(buf: bytes) -> dict[str, Any]:
    """Parse and check a record's header and id (no decompression). Returns a dict;
    raises CacheError (without shard context) on damage."""
    return parse_record_header(buf).as_dict()


def record_error(shard: str, index: int, buf: bytes, e: Exception) -> CacheError:
    """e, an error of record index's stored bytes buf in shard, as the one-line CacheError
    the readers give: "shard-00000: index 5, id 'utt-5': what" (the id as the header claims
    it, unprintable characters and quotes shown as '?')."""
    rid = ""
    if len(buf) >= 64:
        n: int = min(struct.unpack_from("<H", buf, 12)[0], len(buf) - 64, 80)
        rid = "".join(c if c.isprintable() and c != "'" else "?"
                      for c in bytes(buf[64:64 + n]).decode("utf-8", "replace"))
    msg = str(e)
    prefix = "record '%s': " % rid
    if msg.startswith(prefix):
        msg = msg[len(prefix):]
    return CacheError("%s: index %d, id '%s': %s" % (shard, index, rid, msg))


def section_bytes(buf: bytes, h: RecordHeaderV2, i: int, dctx: zstandard.ZstdDecompressor) -> bytes:
    """Check section i's CRC-32 and decompress its zstd body."""
    s = h.sections[i]
    body = bytes(buf[s.offset:s.offset + s.stored])
    name = _SECTION_NAMES[s.kind]
    if zlib.crc32(body) != s.crc:
        raise CacheError("record '%s': %s section checksum mismatch" % (h.id, name))
    try:
        if _fallback.zstandard().get_frame_parameters(body).content_size != s.raw:
            raise CacheError("record '%s': %s section content size does not match" % (h.id, name))
        raw = dctx.decompress(body, max_output_size=max(s.raw, 1))
    except _fallback.zstandard().ZstdError as e:
        raise CacheError("record '%s': %s section: %s" % (h.id, name, e)) from None
    if len(raw) != s.raw:
        raise CacheError("record '%s': %s section decompressed to %d bytes, expected %d"
                         % (h.id, name, len(raw), s.raw))
    return raw


def _decode_v2(buf: bytes, h: RecordHeaderV2,
               dctx: zstandard.ZstdDecompressor) -> tuple[RecordHeaderV2, npt.NDArray[np.int32], npt.NDArray[Any]]:
    """Tokens and mel of a version-2 record, padded to the record's padded shape as
    version 1 stored them (the decoder writes the padding)."""
    raw = section_bytes(buf, h, 0, dctx)
    tokens = np.full(h.tokens_padded, h.pad_token, dtype=np.int32)
    tokens[:h.n_tokens] = np.frombuffer(raw, dtype="<i4", count=h.n_tokens)
    raw = section_bytes(buf, h, 1, dctx)
    C, T = h.n_mels, h.n_frames
    esize = 2 if h.dtype == DTYPE_F16 else 4
    body: npt.NDArray[Any] = np.frombuffer(raw, dtype=np.uint8)
    if h.flags & FLAG_SHUFFLED:
        body = unshuffle(body, esize, C * T)
    stored = body.view("<f2" if esize == 2 else "<f4").reshape(C, T)
    mel = np.empty((C, h.frames_padded), dtype=stored.dtype)
    mel[:, :T] = stored
    mel[:, T:] = h.pad_value  # rounded to the stored dtype, as the C decoder writes it
    return h, tokens, mel


def unshuffle(body: npt.NDArray[np.uint8], esize: int, n: int) -> npt.NDArray[Any]:
    """Byte planes (plane b holds byte b of every element) back to little-endian
    elements, as a uint16/uint32 array."""
    if esize == 2:
        u16 = body[n:2 * n].astype(np.uint16)
        u16 <<= 8
        u16 |= body[:n]
        return u16
    u = body[3 * n:4 * n].astype(np.uint32)
    for k in (2, 1, 0):
        u <<= 8
        u |= body[k * n:(k + 1) * n]
    return u


def decode_stored(buf: bytes, dctx: Optional[zstandard.ZstdDecompressor] = None
                  ) -> tuple[Header, npt.NDArray[np.int32], npt.NDArray[Any]]:
    """Decode a stored record without widening the mel: (header, tokens int32
    [tokens_padded], mel [n_mels, frames_padded] as stored: float16 or float32)."""
    h = parse_record_header(buf)
    if isinstance(h, RecordHeaderV2):
        return _decode_v2(buf, h, dctx or _fallback.zstandard().ZstdDecompressor())
    frame = bytes(buf[64 + h.id_len:])
    # zstd's own checksum covers the content only; this covers the compressed bytes
    if zlib.crc32(frame) != h.frame_crc:
        raise CacheError("record '%s': zstd frame checksum mismatch" % h.id)
    dctx = dctx or _fallback.zstandard().ZstdDecompressor()
    try:
        params = _fallback.zstandard().get_frame_parameters(frame)
    except _fallback.zstandard().ZstdError as e:
        raise CacheError("record '%s': zstd frame: %s" % (h.id, e)) from None
    if params.content_size != h.payload_bytes:
        raise CacheError("record '%s': zstd frame content size does not match header" % h.id)
    try:
        raw = dctx.decompress(frame, max_output_size=h.payload_bytes)
    except _fallback.zstandard().ZstdError as e:
        raise CacheError("record '%s': zstd frame: %s" % (h.id, e)) from None
    if len(raw) != h.payload_bytes:
        raise CacheError("record '%s': payload decompressed to %d bytes, expected %d"
                         % (h.id, len(raw), h.payload_bytes))
    tp, C, T = h.tokens_padded, h.n_mels, h.frames_padded
    tokens = np.frombuffer(raw, dtype="<i4", count=tp).astype(np.int32)
    esize = 2 if h.dtype == DTYPE_F16 else 4
    body: npt.NDArray[Any] = np.frombuffer(raw, dtype=np.uint8, offset=tp * 4)
    if h.flags & FLAG_SHUFFLED:
        body = unshuffle(body, esize, C * T)
    mel = body.view("<f2" if esize == 2 else "<f4").reshape(C, T)
    return h, tokens, mel


def decode_record(buf: bytes, dctx: Optional[zstandard.ZstdDecompressor] = None
                  ) -> tuple[dict[str, Any], npt.NDArray[np.int32], npt.NDArray[np.float32]]:
    """Decode a stored record: (header dict, tokens int32 [tokens_padded],
    mel float32 [n_mels, frames_padded]). Raises CacheError on damage."""
    h, tokens, mel = decode_stored(buf, dctx)
    return h.as_dict(), tokens, mel.astype(np.float32)
