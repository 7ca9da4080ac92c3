import { macroErrorMapper } from './macro-error.mapper.js';
import { QueryTokenCredentials } from '../shared/static-token.credentials.js';
import { defineUpstream } from '../upstream-declaration.js';
import { macroErrorFields } from './macro-error.shape.js';
import { createMacroLoginController } from './macro-login.controller.js';
import { MACRO_LANGUAGES } from './macro.constants.js';
import { MACRO_DOCS } from './macro.route-docs.js';
import { MACRO_COMMON_PARAMS } from './macro-params.js';
import { MACRO_ROUTES } from './macro.routes.js';
import { macroWatchSchedule } from './macro.watch-schedule.js';

const prefixes = ['macro'] as const;

/** The macroeconomic interface (CEIC v2) under `/macro`. */
export const macroUpstream = defineUpstream({
  name: 'macro',
  title: 'the macroeconomic data service',
  prefixes,
  routes: MACRO_ROUTES,
  docs: MACRO_DOCS,
  languages: MACRO_LANGUAGES,
  defaultLanguage: 'en',
  commonParams: MACRO_COMMON_PARAMS,
  errorMapper: macroErrorMapper,
  errorShape: () => macroErrorFields,
  config: { credentials: 'token' },
  // The vendor documents `token` in the query for every operation (spec §5).
  credentials: (u, { redactor }) => new QueryTokenCredentials('token', u.tokenSecret ?? u.token!, redactor),
  controllers: [createMacroLoginController(prefixes)],
  // Series figures change at the vendor's releases: watches read its calendar (macro.watch-schedule.ts).
  watchSchedule: macroWatchSchedule,
});
