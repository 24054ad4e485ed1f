"""A PNG writer for indexed-colour pictures, byte-for-byte the same on every machine.

``zlib.compress`` is not: its output depends on the zlib the interpreter links (zlib, zlib-ng, a distribution's
patches), and a picture's hash must not. So the deflate stream is written here: fixed Huffman codes (RFC 1951,
3.2.6) and only two kinds of symbol, a literal byte and a run (a copy at distance 1). Every row is sent with the
PNG ``Up`` filter, so a row equal to the one above is all zeros: the pictures are tiles of a fixed size, and a
tile's rows repeat. Only arithmetic (CRC-32, Adler-32) comes from ``zlib``; the standard library only, nothing
added to the Lambda asset.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_UP = 2  # the PNG filter type that stores each byte minus the byte above it
_MIN_RUN, _MAX_RUN = 3, 258  # deflate's shortest and longest match
# deflate's length codes 257..285: (code, base length, extra bits)
_LENGTHS: list[tuple[int, int, int]] = []
_base = 3
for _code in range(257, 285):
    _extra = 0 if _code < 265 else (_code - 261) // 4
    _LENGTHS.append((_code, _base, _extra))
    _base += 1 << _extra
_LENGTHS.append((285, 258, 0))


class _Bits:
    """A deflate bit stream: values packed from the least significant bit, Huffman codes from their first bit."""

    def __init__(self) -> None:
        self.out = bytearray()
        self.acc = 0
        self.count = 0

    def put(self, value: int, width: int) -> None:
        self.acc |= value << self.count
        self.count += width
        while self.count >= 8:
            self.out.append(self.acc & 0xFF)
            self.acc >>= 8
            self.count -= 8

    def code(self, code: int, width: int) -> None:
        """A Huffman code, most significant bit first (RFC 1951, 3.1.1)."""
        self.put(int(f"{code:0{width}b}"[::-1], 2), width)

    def finish(self) -> bytes:
        if self.count:
            self.out.append(self.acc & 0xFF)
        return bytes(self.out)


def _symbol(bits: _Bits, value: int) -> None:
    """A literal/length symbol in the fixed code."""
    if value < 144:
        bits.code(0x30 + value, 8)
    elif value < 256:
        bits.code(0x190 + value - 144, 9)
    elif value < 280:
        bits.code(value - 256, 7)
    else:
        bits.code(0xC0 + value - 280, 8)


def _run(bits: _Bits, length: int) -> None:
    """A copy of the previous byte ``length`` times (distance 1: distance code 0, five bits, no extra)."""
    code, base, extra = next(entry for entry in reversed(_LENGTHS) if entry[1] <= length)
    _symbol(bits, code)
    if extra:
        bits.put(length - base, extra)
    bits.code(0, 5)


def deflate(data: bytes) -> bytes:
    """``data`` as one final fixed-Huffman deflate block of literals and runs."""
    bits = _Bits()
    bits.put(1, 1)  # BFINAL
    bits.put(1, 2)  # BTYPE 01: fixed Huffman codes
    i = 0
    while i < len(data):
        _symbol(bits, data[i])
        j = i + 1
        while j < len(data) and data[j] == data[i] and j - i <= _MAX_RUN:
            j += 1
        repeats = j - i - 1
        if repeats >= _MIN_RUN:
            _run(bits, repeats)
            i = j
        else:
            i += 1
    _symbol(bits, 256)  # end of block
    return bits.finish()


def zlib_stream(data: bytes) -> bytes:
    """A zlib stream (RFC 1950) around ``deflate(data)``: header, block, Adler-32."""
    return b"\x78\x01" + deflate(data) + struct.pack(">I", zlib.adler32(data))


def _chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def encode(rows: Sequence[bytes], palette: Sequence[tuple[int, int, int]]) -> bytes:
    """An 8-bit indexed-colour PNG of ``rows`` (one palette index per byte, all rows the same width)."""
    width, height = len(rows[0]), len(rows)
    if not 1 <= len(palette) <= 256 or any(len(row) != width for row in rows):
        raise ValueError("a PNG needs 1 to 256 colours and rows of one width")
    raw = bytearray()
    above = bytes(width)
    for row in rows:
        raw.append(_UP)
        raw += bytes((b - a) & 0xFF for b, a in zip(row, above, strict=True))
        above = row
    header = struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0)  # 8 bits, indexed colour
    return (
        SIGNATURE
        + _chunk(b"IHDR", header)
        + _chunk(b"PLTE", b"".join(bytes(c) for c in palette))
        + _chunk(b"IDAT", zlib_stream(bytes(raw)))
        + _chunk(b"IEND", b"")
    )
