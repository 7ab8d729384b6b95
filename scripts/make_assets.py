#!/usr/bin/env python
"""Make the site's small binary assets from code, so that their origin and licence are plain:
the favicon (static/favicon.ico), the installed app's icons (static/icons/*.png: 192 and 512
px, plain and maskable) and the table's sound effects (static/sounds/*.wav).

Both are made here for the project (no third-party samples). Run from anywhere; the output is
committed, so nobody needs to run this unless changing a sound or the icon:

    python scripts/make_assets.py
"""

from __future__ import annotations

import math
import random
import struct
import wave
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RATE = 16_000  # Hz: plenty for short clicks and chimes, and a quarter of the size of 44.1 kHz


# -- sounds -------------------------------------------------------------------------------------

def _tone(freq: float, seconds: float, *, volume: float = 0.5, decay: float = 8.0,
          start: float = 0.0) -> list[float]:
    n = int(seconds * RATE)
    return [volume * math.exp(-decay * i / RATE) * math.sin(2 * math.pi * freq * (i / RATE + start))
            for i in range(n)]


def _mix(*tracks: tuple[float, list[float]]) -> list[float]:
    length = max(int(at * RATE) + len(t) for at, t in tracks)
    out = [0.0] * length
    for at, track in tracks:
        offset = int(at * RATE)
        for i, v in enumerate(track):
            out[offset + i] += v
    return out


def _fade(samples: list[float], seconds: float = 0.004) -> list[float]:
    # A few milliseconds of fade at both ends: no click where the sound starts or stops.
    n = max(1, int(seconds * RATE))
    out = samples[:]
    for i in range(min(n, len(out))):
        k = i / n
        out[i] *= k
        out[-1 - i] *= k
    return out


def place() -> list[float]:
    """A tile set down on the table: a short wooden knock."""
    rng = random.Random(1)
    noise = [rng.uniform(-1, 1) * 0.35 * math.exp(-90 * i / RATE) for i in range(int(0.05 * RATE))]
    return _fade(_mix((0, _tone(190, 0.09, volume=0.55, decay=45)),
                      (0, _tone(420, 0.06, volume=0.25, decay=70)), (0, noise)))


def your_turn() -> list[float]:
    """Your turn: two rising notes."""
    return _fade(_mix((0, _tone(660, 0.16, volume=0.35, decay=14)),
                      (0.11, _tone(880, 0.22, volume=0.35, decay=12))))


def passed() -> list[float]:
    """A pass: two soft falling notes."""
    return _fade(_mix((0, _tone(440, 0.14, volume=0.3, decay=16)),
                      (0.1, _tone(330, 0.2, volume=0.3, decay=14))))


def time_low() -> list[float]:
    """Time running out: two short ticks."""
    tick = _tone(1200, 0.05, volume=0.35, decay=60)
    return _fade(_mix((0, tick), (0.16, tick)))


def write_wav(path: Path, samples: list[float]) -> None:
    # 8-bit unsigned mono: a few kilobytes each, played by every browser.
    frames = bytes(max(0, min(255, int(128 + 127 * v))) for v in samples)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(1)
        out.setframerate(RATE)
        out.writeframes(frames)


SOUNDS = {"place": place, "turn": your_turn, "pass": passed, "time": time_low}


# -- favicon ------------------------------------------------------------------------------------

def _png(width: int, height: int, pixels: list[list[tuple[int, int, int, int]]]) -> bytes:
    raw = b"".join(b"\x00" + b"".join(bytes(p) for p in row) for row in pixels)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b""))


def icon_pixels(size: int = 32) -> list[list[tuple[int, int, int, int]]]:
    """The site's green square with an upright white double-three tile, as in favicon.svg."""
    felt, ivory, ink = (31, 111, 74, 255), (255, 253, 246, 255), (29, 42, 34, 255)
    s = size / 32

    def inside(x: float, y: float) -> tuple[int, int, int, int]:
        # Tile: x 9..23, y 2..30; a divider at y 16; pips of three on each half.
        if 9 * s <= x < 23 * s and 2 * s <= y < 30 * s:
            if 15.5 * s <= y < 16.5 * s and 11 * s <= x < 21 * s:
                return ink
            for cy0 in (2, 16):
                for i in range(3):
                    px, py = (12 + 4 * i) * s, (cy0 + 3 + 4 * i) * s
                    if (x - px) ** 2 + (y - py) ** 2 <= (1.6 * s) ** 2:
                        return ink
            return ivory
        return felt

    return [[inside(x + 0.5, y + 0.5) for x in range(size)] for y in range(size)]


def app_icon_pixels(size: int, *, maskable: bool) -> list[list[tuple[int, int, int, int]]]:
    """The favicon's drawing at an app icon's size, smoothed (4 samples a pixel). A maskable
    icon is cut to any shape by the phone: its felt fills the square and the tile shrinks into
    the middle 80% circle that every mask keeps (the W3C's "safe zone")."""
    scale = 0.62 if maskable else 1.0
    base = 32.0
    offset = (1 - scale) * base / 2

    def draw(x: float, y: float) -> tuple[int, int, int, int]:
        u, v = x / size * base, y / size * base
        u, v = (u - offset) / scale, (v - offset) / scale
        return _figure(u, v)

    rows = []
    for y in range(size):
        row = []
        for x in range(size):
            samples = [draw(x + dx, y + dy) for dx in (0.25, 0.75) for dy in (0.25, 0.75)]
            row.append(tuple(round(sum(c[i] for c in samples) / 4) for i in range(4)))
        rows.append(row)
    return rows


def _figure(u: float, v: float) -> tuple[int, int, int, int]:
    """The favicon's drawing at (u, v) in its own 32-unit square; felt outside it."""
    felt, ivory, ink = (31, 111, 74, 255), (255, 253, 246, 255), (29, 42, 34, 255)
    if 9 <= u < 23 and 2 <= v < 30:
        if 15.5 <= v < 16.5 and 11 <= u < 21:
            return ink
        for cy0 in (2, 16):
            for i in range(3):
                px, py = 12 + 4 * i, cy0 + 3 + 4 * i
                if (u - px) ** 2 + (v - py) ** 2 <= 1.6 ** 2:
                    return ink
        return ivory
    return felt


def write_icons(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for size in (192, 512):
        for maskable in (False, True):
            path = folder / f"{'maskable' if maskable else 'icon'}-{size}.png"
            path.write_bytes(_png(size, size, app_icon_pixels(size, maskable=maskable)))
            written.append(path)
    return written


def write_ico(path: Path) -> None:
    png = _png(32, 32, icon_pixels(32))
    header = struct.pack("<HHH", 0, 1, 1)
    entry = struct.pack("<BBBBHHII", 32, 32, 0, 0, 1, 32, len(png), 6 + 16)
    path.write_bytes(header + entry + png)


def main() -> None:
    sounds = ROOT / "static" / "sounds"
    sounds.mkdir(parents=True, exist_ok=True)
    for name, make in SOUNDS.items():
        write_wav(sounds / f"{name}.wav", make())
    write_ico(ROOT / "static" / "favicon.ico")
    icons = write_icons(ROOT / "static" / "icons")
    for path in sorted([*sounds.glob("*.wav"), ROOT / "static" / "favicon.ico", *icons]):
        print(f"{path.relative_to(ROOT)}: {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
