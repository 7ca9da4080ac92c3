import { IsBoolean, IsIn, IsOptional, IsString } from 'class-validator';
import { MACRO_LANGUAGES } from '../macro.constants.js';
import { ToBoolean, ToLowerOrAbsent } from './query-transforms.js';

/**
 * The common parameters of the fully specified macro operations (spec §4.1). `format` is checked by the
 * gateway's negotiation (415, not 400); `token` is a key position, consumed by the auth guard.
 */
export class MacroCommonQueryDto {
  @IsOptional()
  @ToLowerOrAbsent()
  @IsIn(MACRO_LANGUAGES, { message: `lang must be one of ${MACRO_LANGUAGES.join(', ')}` })
  @IsString({ message: 'lang must be given once' })
  lang?: string;

  @IsOptional() @IsString({ message: 'format must be given once' }) format?: string;

  @IsOptional() @IsString({ message: 'token must be given once' }) token?: string;

  @IsOptional()
  @ToBoolean()
  @IsBoolean({ message: 'with_model_information must be true or false' })
  with_model_information?: boolean;
}
