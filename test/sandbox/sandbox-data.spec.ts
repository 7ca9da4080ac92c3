import { companies } from '../../src/sandbox/company/company.data.js';
import { createRng, hashSeed } from '../../src/sandbox/data/seeded.js';
import { documents } from '../../src/sandbox/documents/documents.data.js';
import { macroFeeds } from '../../src/sandbox/macro/feeds.data.js';
import { layoutAncestors, layoutTree } from '../../src/sandbox/macro/layout.data.js';
import { seriesInfo, seriesTimePoints } from '../../src/sandbox/macro/series.data.js';

describe('sandbox data', () => {
  it('seeds a reproducible PRNG', () => {
    const a = createRng('x');
    const b = createRng('x');
    const seqA = [a.next(), a.next(), a.int(1, 6)];
    expect([b.next(), b.next(), b.int(1, 6)]).toEqual(seqA);
    expect(createRng('y').next()).not.toBe(seqA[0]);
    expect(hashSeed('abc')).toBe(hashSeed('abc'));
  });

  it('generates the same feeds each time, as independent copies', () => {
    const a = macroFeeds();
    const b = macroFeeds();
    expect(a).toEqual(b);
    a[0].name = 'changed';
    expect(macroFeeds()[0].name).not.toBe('changed');
  });

  it('builds the layout tree with WORLD/TP301/SC3310/TB1207', () => {
    expect(layoutTree().databases.map((d) => d.id)).toEqual(['WORLD', 'CN', 'EMERGE', 'GLOBAL']);
    expect(layoutAncestors('TB1207')).toEqual({
      database: 'WORLD',
      topic: 'TP301',
      section: 'SC3310',
      table: 'TB1207',
    });
    expect(layoutTree().byId.get('TB1207')!.seriesIds[0]).toBe('310070');
  });

  it('generates series deterministically, unsubscribed when the id ends in 9', () => {
    expect(seriesInfo('310070')).toEqual(seriesInfo('310070'));
    expect(seriesInfo('310079').subscribed).toBe(false);
    const points = seriesTimePoints(seriesInfo('310070'));
    expect(points[points.length - 1].date).toBe('2024-12-31');
    expect(points).toEqual(seriesTimePoints(seriesInfo('310070')));
  });

  it('generates companies and documents', () => {
    expect(companies()).toHaveLength(200);
    expect(new Set(companies().map((c) => c.kind))).toEqual(
      new Set(['banking', 'insurance', 'non-financial']),
    );
    expect(documents()).toHaveLength(300);
  });
});
