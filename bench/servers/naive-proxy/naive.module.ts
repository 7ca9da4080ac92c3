import { HttpModule } from '@nestjs/axios';
import { CacheModule } from '@nestjs/cache-manager';
import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerGuard, ThrottlerModule } from '@nestjs/throttler';
import { NAIVE_UPSTREAM, SeriesController } from './series.controller.js';

/**
 * The baseline a team builds first, as the Nest docs show it: HttpModule (axios), the stock in-memory
 * CacheModule with CacheInterceptor, the stock ThrottlerGuard (in-memory storage, keyed by client IP).
 * The throttle window is one second with a limit the bench never reaches: the most favourable setting for
 * the stock storage, whose cost grows with the hits held in the window.
 */
@Module({
  imports: [
    HttpModule.register({ timeout: 5000, maxRedirects: 5 }),
    CacheModule.register({ ttl: 60_000 }),
    ThrottlerModule.forRoot([{ ttl: 1000, limit: 1_000_000 }]),
  ],
  controllers: [SeriesController],
  providers: [
    { provide: APP_GUARD, useClass: ThrottlerGuard },
    {
      provide: NAIVE_UPSTREAM,
      useValue: {
        baseUrl: (process.env.UPSTREAM_BASE_URL ?? 'http://127.0.0.1:9/v2').replace(/\/+$/, ''),
        token: process.env.UPSTREAM_TOKEN ?? 'bench-naive-token',
      },
    },
  ],
})
export class NaiveModule {}
