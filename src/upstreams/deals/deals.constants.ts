export const DEALS_UPSTREAM = 'deals';
export const DEALS_TITLE = 'the deal service';
/** `/dw` is the EMIS client's own name for this API (DealWatch; its paths start with `dw/`). */
export const DEALS_PREFIXES = ['deals', 'dw'] as const;
