import { IsIn, IsInt, IsNotEmpty, IsOptional, IsString, Max, Min } from 'class-validator';
import { MacroCommonQueryDto } from './macro-common-query.dto.js';
import {
  HasAtMostDigits,
  HasNoEmptyItems,
  IsSpecDate,
  ToList,
  ToStrictInt,
  ToTrimmed,
} from './query-transforms.js';

/**
 * GET /feeds (spec §4.2). Validated before any upstream call; what is forwarded is the canonical request
 * (macro-params.ts says how each parameter is spelt to the vendor).
 */
export class FeedsQueryDto extends MacroCommonQueryDto {
  @IsOptional()
  @ToStrictInt()
  @IsInt({ message: 'offset must be a whole number ≥ 0' })
  @Min(0, { message: 'offset must be a whole number ≥ 0' })
  @HasAtMostDigits(15)
  offset?: number;

  @IsOptional()
  @ToStrictInt()
  @IsInt({ message: 'limit must be a whole number from 1 to 100' })
  @Min(1, { message: 'limit must be a whole number from 1 to 100' })
  @Max(100, { message: 'limit must be a whole number from 1 to 100' })
  @HasAtMostDigits(15)
  limit?: number;

  @IsOptional() @IsSpecDate() created_after?: string;

  @IsOptional() @IsSpecDate() created_before?: string;

  @IsOptional()
  @ToTrimmed()
  @IsNotEmpty({ message: 'filter_id must not be empty' })
  @IsString({ message: 'filter_id must be given once' })
  filter_id?: string;

  @IsOptional()
  @IsIn(['ASC', 'DESC'], { message: 'created_order must be ASC or DESC' })
  created_order?: string;

  @IsOptional()
  @ToList()
  @IsIn(['ACTIVE', 'DELETED'], { each: true, message: 'status must be ACTIVE and/or DELETED' })
  @HasNoEmptyItems()
  status?: string[];
}
