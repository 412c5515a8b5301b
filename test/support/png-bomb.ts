import * as zlib from 'node:zlib';

/** Bombs already built, by size: the fuzz asks for the same one again and again. */
const built = new Map<string, Buffer>();

/**
 * A decompression bomb: a valid PNG (1-bit greyscale, all black) whose few kilobytes declare
 * `width × height` pixels. Built by hand (no encoder would be asked to make one). Deflating the
 * zeros of a 20,000 × 20,000 bomb takes ~80 ms of CPU, so each size is built once per file and
 * handed out as a copy (a caller may write into its buffer).
 */
export function pngBomb(width: number, height: number): Buffer {
  const key = `${width}x${height}`;
  let bomb = built.get(key);
  if (!bomb) built.set(key, (bomb = buildPngBomb(width, height)));
  return Buffer.from(bomb);
}

function buildPngBomb(width: number, height: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), 8 + data.length);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // greyscale
  // Each row: a filter byte (0) and ceil(width / 8) bytes of zeros; all of it compresses to almost nothing.
  const idat = zlib.deflateSync(Buffer.alloc(height * (1 + Math.ceil(width / 8))), { level: 9 });
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', idat),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
