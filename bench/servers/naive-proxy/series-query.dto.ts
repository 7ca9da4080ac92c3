import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';

/** Path parameters of `GET /macro/series/:id/data`, validated by the global ValidationPipe. */
export class SeriesParamsDto {
  @IsString()
  @Length(1, 128)
  id!: string;
}

/** The query the bench sends (the body size and latency the fake upstream should use). */
export class SeriesDataQueryDto {
  @IsOptional()
  @IsIn(['2k', '200k'])
  size?: string;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(10_000)
  delay?: number;

  @IsOptional()
  @IsIn(['en', 'zh', 'ru', 'id', 'jp'])
  lang?: string;
}
