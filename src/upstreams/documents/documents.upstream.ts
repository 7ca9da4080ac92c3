import { emisUpstream } from '../shared/emis-definition.js';
import { DOCUMENTS_ROUTES } from './documents.routes.js';

/** The document interface (EMIS Documents) under `/documents` and its client's own `/news`. */
export const documentsUpstream = emisUpstream({
  name: 'documents',
  title: 'the document service',
  // `/news` is the EMIS client's own name for this API (its paths start with `news/`).
  prefixes: ['documents', 'news'],
  routes: DOCUMENTS_ROUTES,
  sandbox: {
    fake: () =>
      import('../../sandbox/documents/fake-documents.upstream.js').then(
        (m) => (s, o) => new m.FakeDocumentsUpstream({ ...s, ...o }),
      ),
    // The sandbox exercises the login step here (and the portal key on deals).
    credentials: 'login',
  },
});
