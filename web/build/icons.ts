// The app's PNG icons, drawn at build time (no image tool, no download): the same picture
// as public/icon.svg, a white speech bubble with three dots on blue, rasterized here with
// a little anti-aliasing and written as PNG with node's zlib.
import { deflateSync } from "node:zlib";
import type { Plugin } from "vite";

type Shape = (x: number, y: number) => boolean;
const BLUE: [number, number, number] = [0x1a, 0x56, 0xc4];
const WHITE: [number, number, number] = [0xff, 0xff, 0xff];

function roundedRect(x0: number, y0: number, x1: number, y1: number, r: number): Shape {
  return (x, y) => {
    if (x < x0 || x > x1 || y < y0 || y > y1) return false;
    const cx = Math.min(Math.max(x, x0 + r), x1 - r);
    const cy = Math.min(Math.max(y, y0 + r), y1 - r);
    return (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
  };
}

const circle =
  (cx: number, cy: number, r: number): Shape =>
  (x, y) =>
    (x - cx) ** 2 + (y - cy) ** 2 <= r * r;

function tail(x: number, y: number): boolean {
  // The triangle (176,340) (250,340) (176,408): the bubble's tail.
  return y >= 340 && y <= 408 && x >= 176 && x <= 250 - ((y - 340) * 74) / 68;
}

/** The colour of a point of the 512-unit picture; `maskable` keeps a safe zone (80 %). */
function colour(x: number, y: number, maskable: boolean): [number, number, number, number] {
  if (maskable) {
    x = 256 + (x - 256) / 0.8;
    y = 256 + (y - 256) / 0.8;
  } else if (!roundedRect(0, 0, 512, 512, 112)(x, y)) return [0, 0, 0, 0];
  const bubble = roundedRect(96, 150, 416, 350, 40)(x, y) || tail(x, y);
  const dot = [190, 256, 322].some((cx) => circle(cx, 250, 22)(x, y));
  return [...(bubble && !dot ? WHITE : BLUE), 255];
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const b of bytes) c = (CRC_TABLE[(c ^ b) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

export function iconPng(size: number, maskable = false): Buffer {
  const samples = 3; // 3x3 samples a pixel: smooth edges
  const rows: Buffer[] = [];
  for (let py = 0; py < size; py++) {
    const row = Buffer.alloc(1 + size * 4); // filter byte 0, then RGBA
    for (let px = 0; px < size; px++) {
      const sum = [0, 0, 0, 0];
      for (let sy = 0; sy < samples; sy++)
        for (let sx = 0; sx < samples; sx++) {
          const c = colour(((px + (sx + 0.5) / samples) * 512) / size, ((py + (sy + 0.5) / samples) * 512) / size, maskable);
          for (let i = 0; i < 4; i++) sum[i] = (sum[i] ?? 0) + (c[i] ?? 0);
        }
      for (let i = 0; i < 4; i++) row[1 + px * 4 + i] = Math.round((sum[i] ?? 0) / samples ** 2);
    }
    rows.push(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8 bits, RGBA
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk("IHDR", header), chunk("IDAT", deflateSync(Buffer.concat(rows), { level: 9 })), chunk("IEND", Buffer.alloc(0))]);
}

/** Emits the PNG icons the manifest names into the build. */
export function icons(): Plugin {
  return {
    name: "app-icons",
    apply: "build",
    generateBundle() {
      const files: [string, Buffer][] = [
        ["icon-192.png", iconPng(192)],
        ["icon-512.png", iconPng(512)],
        ["icon-maskable-512.png", iconPng(512, true)],
        ["apple-touch-icon.png", iconPng(180, true)],
      ];
      for (const [fileName, source] of files) this.emitFile({ type: "asset", fileName, source });
    },
  };
}
