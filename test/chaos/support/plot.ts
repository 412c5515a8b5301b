import * as fs from 'node:fs';
import * as path from 'node:path';
import sharp from 'sharp';

export interface Series {
  label: string;
  color: string;
  /** One value per bucket (requests in that second). */
  values: number[];
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * A line chart of requests per second, drawn as SVG and rendered to PNG with sharp: one line per
 * series, a dashed vertical marker at `markerAt` seconds (the receiver's recovery).
 */
export async function plotRequestsPerSecond(
  file: string,
  title: string,
  series: Series[],
  markerAt: number,
  markerLabel: string,
): Promise<void> {
  const width = 1000;
  const height = 480;
  const m = { left: 70, right: 20, top: 50, bottom: 60 };
  const w = width - m.left - m.right;
  const h = height - m.top - m.bottom;
  const seconds = Math.max(1, ...series.map((s) => s.values.length));
  const peak = Math.max(1, ...series.flatMap((s) => s.values));
  const step = niceStep(peak / 5);
  const top = Math.ceil(peak / step) * step;
  const x = (t: number) => m.left + (t / seconds) * w;
  const y = (v: number) => m.top + h - (v / top) * h;
  const parts: string[] = [];
  parts.push(`<rect width="${width}" height="${height}" fill="white"/>`);
  parts.push(`<text x="${width / 2}" y="28" font-family="sans-serif" font-size="18" text-anchor="middle">${esc(title)}</text>`);
  for (let v = 0; v <= top; v += step) {
    parts.push(`<line x1="${m.left}" x2="${m.left + w}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`);
    parts.push(`<text x="${m.left - 8}" y="${y(v) + 4}" font-family="sans-serif" font-size="12" text-anchor="end">${v}</text>`);
  }
  const xStep = niceStep(seconds / 10);
  for (let t = 0; t <= seconds; t += xStep) {
    parts.push(`<text x="${x(t)}" y="${m.top + h + 18}" font-family="sans-serif" font-size="12" text-anchor="middle">${t}</text>`);
  }
  parts.push(
    `<text x="${m.left + w / 2}" y="${height - 15}" font-family="sans-serif" font-size="13" text-anchor="middle">seconds since the first request</text>`,
  );
  parts.push(
    `<text x="18" y="${m.top + h / 2}" font-family="sans-serif" font-size="13" text-anchor="middle" transform="rotate(-90 18 ${m.top + h / 2})">requests per second at the receiver</text>`,
  );
  parts.push(`<line x1="${m.left}" x2="${m.left}" y1="${m.top}" y2="${m.top + h}" stroke="black"/>`);
  parts.push(`<line x1="${m.left}" x2="${m.left + w}" y1="${m.top + h}" y2="${m.top + h}" stroke="black"/>`);
  parts.push(`<line x1="${x(markerAt)}" x2="${x(markerAt)}" y1="${m.top}" y2="${m.top + h}" stroke="#888" stroke-dasharray="6 4"/>`);
  parts.push(`<text x="${x(markerAt) + 6}" y="${m.top + 14}" font-family="sans-serif" font-size="12">${esc(markerLabel)}</text>`);
  series.forEach((s, i) => {
    const points = s.values.map((v, t) => `${x(t + 0.5).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    parts.push(`<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${points}"/>`);
    parts.push(
      `<line x1="${m.left + 20}" x2="${m.left + 50}" y1="${m.top + 14 + i * 20}" y2="${m.top + 14 + i * 20}" stroke="${s.color}" stroke-width="3"/>`,
    );
    parts.push(`<text x="${m.left + 56}" y="${m.top + 18 + i * 20}" font-family="sans-serif" font-size="13">${esc(s.label)}</text>`);
  });
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${parts.join('')}</svg>`;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  await sharp(Buffer.from(svg)).png({ compressionLevel: 9 }).toFile(file);
}

function niceStep(raw: number): number {
  if (raw <= 1) return 1;
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const k of [1, 2, 5, 10]) if (k * p >= raw) return k * p;
  return 10 * p;
}

/** Requests per 1-second bucket since `from` (ms), up to the last one. */
export function perSecond(times: number[], from: number): number[] {
  const buckets: number[] = [];
  for (const t of times) {
    const i = Math.floor((t - from) / 1000);
    if (i < 0) continue;
    while (buckets.length <= i) buckets.push(0);
    buckets[i] += 1;
  }
  return buckets;
}
