// Fake CEIC layout tree: databases, topics, sections, tables, their series and footnotes.
import type { FakeRouter } from '../fake-router.js';
import { type MacroEnv, type MacroHandler, notFound, ok } from './macro-errors.js';
import type { FakeReply } from '../fake-upstream.js';
import { layoutTree, type LayoutNode } from './layout.data.js';
import { layoutFull, layoutItem, seriesMetadata } from './macro-views.js';
import { seriesInfo, seriesTimePoints } from './series.data.js';

export function layoutRoutes(r: FakeRouter<MacroHandler>, env: MacroEnv): void {
  const get = (p: string, h: MacroHandler) => r.add('GET', p, h);
  const node = (id: string | undefined, kind: LayoutNode['kind']) => {
    const n = layoutTree().byId.get(id ?? '');
    return n?.kind === kind ? n : undefined;
  };
  const children = (id: string | undefined, kind: LayoutNode['kind']): FakeReply => {
    const n = node(id, kind);
    if (!n) return notFound(`Layout ${kind} ${id}`);
    const { byId } = layoutTree();
    return ok({ data: n.childIds.map((c) => layoutItem(byId.get(c) ?? n)) });
  };
  const full = (id: string | undefined, kind: LayoutNode['kind']): FakeReply => {
    const n = node(id, kind);
    return n ? ok(layoutFull(n)) : notFound(`Layout ${kind} ${id}`);
  };

  get('/layout/databases', () => ok({ data: layoutTree().databases.map(layoutItem) }));
  get('/layout/databases/:id/topics', ({ params }) => children(params.id, 'database'));
  get('/layout/topics/:id', ({ params }) => full(params.id, 'topic'));
  get('/layout/topics/:id/sections', ({ params }) => children(params.id, 'topic'));
  get('/layout/sections/:id', ({ params }) => full(params.id, 'section'));
  get('/layout/sections/:id/tables', ({ params }) => children(params.id, 'section'));
  get('/layout/tables/:id', ({ params }) => full(params.id, 'table'));
  get('/layout/tables/:id/series', ({ params }) => {
    const n = node(params.id, 'table');
    if (!n) return notFound(`Layout table ${params.id}`);
    return ok({
      data: n.seriesIds.map((id) => {
        const info = seriesInfo(id);
        return {
          entityId: id,
          subscribed: info.subscribed,
          metadata: seriesMetadata(info, seriesTimePoints(info)),
        };
      }),
    });
  });
  get('/layout/:node_code/footnote', ({ params }) => {
    const n = layoutTree().byId.get(params.node_code ?? '');
    if (!n) return notFound(`Layout node ${params.node_code}`);
    return ok({
      data: [
        {
          metadata: { id: n.id, name: n.name },
          footnote: `Data in ${n.name} are compiled from official sources.`,
          resources: [
            {
              id: `${n.id}-FN1`,
              name: `${n.name} methodology`,
              downloadLink: `${env.url()}/downloads/${n.id}-FN1.pdf`,
            },
          ],
        },
      ],
    });
  });
}
