export const DOCUMENTS_UPSTREAM = 'documents';
export const DOCUMENTS_TITLE = 'the document service';
/** `/news` is the EMIS client's own name for this API (its paths start with `news/`). */
export const DOCUMENTS_PREFIXES = ['documents', 'news'] as const;
