import { decodeEntities, parseOpenGraph } from './open-graph';

describe('parseOpenGraph', () => {
  it('reads og:title, og:description and og:image in any attribute order and quoting', () => {
    const html = `<!doctype html><html><head>
      <title>Fallback</title>
      <meta content="Launch &amp; learn" property="og:title">
      <meta property='og:description' content='All about the &quot;launch&quot; &#x1F680;'/>
      <meta property=og:image content=/img/card.png>
    </head><body></body></html>`;
    expect(parseOpenGraph(html, 'https://example.com/blog/post')).toEqual({
      title: 'Launch & learn',
      description: 'All about the "launch" 🚀',
      image: 'https://example.com/img/card.png',
    });
  });

  it('falls back to Twitter tags, then <title> and the description meta tag', () => {
    expect(parseOpenGraph('<title> Page\n title </title><meta name="description" content="Plain">', 'https://e.com/')).toEqual({
      title: 'Page title',
      description: 'Plain',
      image: null,
    });
    expect(parseOpenGraph('<meta name="twitter:title" content="T"><meta name="twitter:image" content="https://cdn.e.com/x.jpg">', 'https://e.com/')).toEqual({
      title: 'T',
      description: null,
      image: 'https://cdn.e.com/x.jpg',
    });
  });

  it('keeps the first og:image and ignores non-http images', () => {
    expect(parseOpenGraph('<meta property="og:image" content="https://e.com/a.png"><meta property="og:image" content="https://e.com/b.png">', 'https://e.com/').image).toBe('https://e.com/a.png');
    expect(parseOpenGraph('<meta property="og:image" content="javascript:alert(1)">', 'https://e.com/').image).toBeNull();
  });

  it('cuts very long titles', () => {
    const title = parseOpenGraph(`<meta property="og:title" content="${'x'.repeat(500)}">`, 'https://e.com/').title ?? '';
    expect([...title]).toHaveLength(300);
    expect(title.endsWith('…')).toBe(true);
  });

  it('decodes entities as a browser does (every named one), leaving unknown ones alone', () => {
    expect(decodeEntities('&bogus; &lt;b&gt; Caf&eacute; &mdash; it&rsquo;s &#x1F680;')).toBe('&bogus; <b> Café — it’s 🚀');
    // NUL is not a character a page may contain: the replacement character, as in browsers.
    expect(decodeEntities('&#0;')).toBe('\uFFFD');
  });
});
