export const COMPANY_UPSTREAM = 'company';
export const COMPANY_TITLE = 'the company data service';
export const COMPANY_PREFIXES = ['company'] as const;
