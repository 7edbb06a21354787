// The demo gate's source rule, on its own: a `src` is allowed only under a DEMO_SOURCES prefix,
// judged on the parsed URL at a segment boundary, and never with dot segments or encoded
// separators (which URL parsing would resolve to another path than the string shows).
import { expect } from 'chai';
import { demoSourceAllowed } from '../../../src/web/services/demo-gate.js';

const SOURCES = ['https://cdn.example.com/demo/images'];

describe('demo gate: allowed sources', () => {
  it('allows the prefix itself and paths below it', () => {
    expect(demoSourceAllowed('https://cdn.example.com/demo/images', SOURCES)).to.equal(true);
    expect(demoSourceAllowed('https://cdn.example.com/demo/images/cat.jpg', SOURCES)).to.equal(true);
  });

  it('refuses another origin, a sibling path sharing the prefix string, and what does not parse', () => {
    expect(demoSourceAllowed('http://cdn.example.com/demo/images/cat.jpg', SOURCES)).to.equal(false);
    expect(demoSourceAllowed('https://cdn.example.com.evil.net/demo/images/cat.jpg', SOURCES)).to.equal(false);
    expect(demoSourceAllowed('https://cdn.example.com/demo/images-private/cat.jpg', SOURCES)).to.equal(false);
    expect(demoSourceAllowed('not a url', SOURCES)).to.equal(false);
  });

  it('refuses dot segments, raw or encoded, and encoded separators', () => {
    for (const src of [
      'https://cdn.example.com/demo/images/../private/cat.jpg',
      'https://cdn.example.com/demo/images/%2e%2e/private/cat.jpg',
      'https://cdn.example.com/demo/images/./cat.jpg',
      'https://cdn.example.com/demo/images/a%2fb.jpg',
      'https://cdn.example.com/demo/images/a%5cb.jpg',
    ]) {
      expect(demoSourceAllowed(src, SOURCES), src).to.equal(false);
    }
  });
});
