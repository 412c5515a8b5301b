import type { Sharp, SharpOptions } from 'sharp';

type SharpFactory = (input?: Buffer, options?: SharpOptions) => Sharp;

/**
 * sharp (libvips) is loaded the first time an image is processed, not at startup: it maps about
 * 20 MB that a process never handling an image (a worker delivering webhooks) does not need.
 * Node caches the module, so every later call costs a resolved promise.
 */
export async function loadSharp(): Promise<SharpFactory> {
  return (await import('sharp')).default;
}
