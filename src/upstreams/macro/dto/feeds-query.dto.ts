import { IsIn, IsInt, IsNotEmpty, IsOptional, IsString, Max, Min } from 'class-validator';
import { MacroCommonQueryDto } from './macro-common-query.dto.js';
import { IsSpecDate, ToList, ToStrictInt } from './query-transforms.js';

/** GET /feeds (spec §4.2). Validated before any upstream call; the query is forwarded as sent. */
export class FeedsQueryDto extends MacroCommonQueryDto {
  @IsOptional()
  @ToStrictInt()
  @IsInt({ message: 'offset must be a whole number ≥ 0' })
  @Min(0, { message: 'offset must be a whole number ≥ 0' })
  offset?: number;

  @IsOptional()
  @ToStrictInt()
  @IsInt({ message: 'limit must be a whole number from 1 to 100' })
  @Min(1, { message: 'limit must be a whole number from 1 to 100' })
  @Max(100, { message: 'limit must be a whole number from 1 to 100' })
  limit?: number;

  @IsOptional() @IsSpecDate() created_after?: string;

  @IsOptional() @IsSpecDate() created_before?: string;

  @IsOptional()
  @IsString({ message: 'filter_id must be given once' })
  @IsNotEmpty({ message: 'filter_id must not be empty' })
  filter_id?: string;

  @IsOptional()
  @IsIn(['ASC', 'DESC'], { message: 'created_order must be ASC or DESC' })
  created_order?: string;

  @IsOptional()
  @ToList()
  @IsIn(['ACTIVE', 'DELETED'], { each: true, message: 'status must be ACTIVE and/or DELETED' })
  status?: string[];
}
