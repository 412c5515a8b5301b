/**
 * The second line behind the CSRF token (pure): a form of the settings page is refused when the
 * browser says it was posted from another site, even with a valid token. Browsers send
 * `Sec-Fetch-Site` on every request and `Origin` on every POST; a form of our own pages has
 * `Sec-Fetch-Site: same-origin` and our own origin. A client that sends neither (curl, an old
 * browser) is left to the token alone.
 */
export function crossSiteProblem(headers: { origin?: string; secFetchSite?: string }, ownOrigins: readonly string[]): string | null {
  const site = headers.secFetchSite?.trim().toLowerCase();
  if (site !== undefined && site !== '' && site !== 'same-origin' && site !== 'none') return `Sec-Fetch-Site: ${site}`;
  const origin = headers.origin?.trim();
  // `Origin: null` says nothing: our pages' Referrer-Policy is no-referrer, under which browsers
  // send `null` on every POST, our own forms included (Fetch, "append a request Origin header").
  // Sec-Fetch-Site still tells where such a form came from.
  if (origin !== undefined && origin !== '' && origin !== 'null') {
    if (!ownOrigins.some((o) => o === origin.toLowerCase())) return `Origin: ${origin.slice(0, 100)}`;
  }
  return null;
}

/** The origin of a URL, lower-cased, or null. */
export function originOf(url: string): string | null {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? null : origin.toLowerCase();
  } catch {
    return null;
  }
}
