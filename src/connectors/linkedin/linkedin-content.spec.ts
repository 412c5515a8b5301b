import fc from 'fast-check';
import { LINKEDIN_MAX_IMAGES, LinkedInImage, linkedinContent, linkedinText } from './linkedin-content';

const image = (n: number): LinkedInImage => ({ id: `urn:li:image:C4D${n}`, altText: `image ${n}` });
const images = (count: number) => Array.from({ length: count }, (_, i) => image(i + 1));

describe('linkedinContent', () => {
  it('is nothing for text alone, and an article for a link without images (its title, else the link)', () => {
    expect(linkedinContent([], null, null)).toBeUndefined();
    expect(linkedinContent([], null, 'A title')).toBeUndefined();
    expect(linkedinContent([], 'https://example.com/a', 'A title')).toEqual({
      article: { source: 'https://example.com/a', title: 'A title' },
    });
    expect(linkedinContent([], 'https://example.com/a', null)).toEqual({
      article: { source: 'https://example.com/a', title: 'https://example.com/a' },
    });
  });

  it('is content.media for one image, with its alt text; the link is not an article then', () => {
    expect(linkedinContent([image(1)], 'https://example.com/a', 'A title')).toEqual({
      media: { id: 'urn:li:image:C4D1', altText: 'image 1' },
    });
  });

  it('is content.multiImage for 2 images and for 20, in the given order, each with its alt text', () => {
    expect(linkedinContent(images(2), null, null)).toEqual({
      multiImage: {
        images: [
          { id: 'urn:li:image:C4D1', altText: 'image 1' },
          { id: 'urn:li:image:C4D2', altText: 'image 2' },
        ],
      },
    });
    expect(linkedinContent(images(20), 'https://example.com/a', null)).toEqual({ multiImage: { images: images(20) } });
  });

  it('keeps any 2 to 20 images as given: same order, same alt text, nothing else', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ id: fc.string({ minLength: 1 }), altText: fc.string() }), { minLength: 2, maxLength: LINKEDIN_MAX_IMAGES }),
        fc.option(fc.webUrl(), { nil: null }),
        (given, link) => {
          const content = linkedinContent(given, link, null);
          expect(content).toEqual({ multiImage: { images: given } });
        },
      ),
      { seed: 20261206 },
    );
  });

  it('refuses more than 20 images (intake refuses them first)', () => {
    expect(() => linkedinContent(images(21), null, null)).toThrow('LinkedIn takes at most 20 images per post (this one has 21)');
  });
});

describe('linkedinText', () => {
  it('appends the link after a blank line when the post has images, unless the text already holds it', () => {
    expect(linkedinText('Out now', 'https://example.com/a', 2)).toBe('Out now\n\nhttps://example.com/a');
    expect(linkedinText('Out now: https://example.com/a', 'https://example.com/a', 2)).toBe('Out now: https://example.com/a');
    expect(linkedinText('Out now', 'https://example.com/a', 0)).toBe('Out now');
    expect(linkedinText('Out now', null, 3)).toBe('Out now');
  });
});
