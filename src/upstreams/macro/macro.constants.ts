/** Languages of the macroeconomic interface (spec §4.1); `jp`, not `ja`. */
export const MACRO_LANGUAGES = ['en', 'zh', 'ru', 'id', 'jp'] as const;
