import { MacroCommonQueryDto } from './macro-common-query.dto.js';

/** GET /layout/tables/{id} (spec §4.3): only the common parameters; the id is checked as a path parameter. */
export class LayoutTableQueryDto extends MacroCommonQueryDto {}
