import { HttpService } from '@nestjs/axios';
import { CacheInterceptor } from '@nestjs/cache-manager';
import {
  BadGatewayException,
  Controller,
  Get,
  HttpException,
  Inject,
  Param,
  Query,
  UseInterceptors,
} from '@nestjs/common';
import { isAxiosError } from 'axios';
import { firstValueFrom } from 'rxjs';
import { SeriesDataQueryDto, SeriesParamsDto } from './series-query.dto.js';

export const NAIVE_UPSTREAM = Symbol('NaiveUpstream');

export interface NaiveUpstream {
  readonly baseUrl: string;
  readonly token: string;
}

/** The first-draft proxy: fetch with @nestjs/axios, return the parsed data, let Nest serialise it. */
@Controller('macro')
@UseInterceptors(CacheInterceptor)
export class SeriesController {
  constructor(
    private readonly http: HttpService,
    @Inject(NAIVE_UPSTREAM) private readonly upstream: NaiveUpstream,
  ) {}

  @Get('series/:id/data')
  async seriesData(@Param() params: SeriesParamsDto, @Query() query: SeriesDataQueryDto): Promise<unknown> {
    try {
      const res = await firstValueFrom(
        this.http.get<unknown>(`${this.upstream.baseUrl}/series/${encodeURIComponent(params.id)}/data`, {
          params: { ...query, token: this.upstream.token },
        }),
      );
      return res.data;
    } catch (err) {
      if (isAxiosError(err) && err.response)
        throw new HttpException(err.response.data as object, err.response.status);
      throw new BadGatewayException();
    }
  }
}
