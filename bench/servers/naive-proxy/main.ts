// The naive Nest proxy (bench baseline only, not part of the product): Nest + Express + @nestjs/axios +
// CacheInterceptor + ThrottlerGuard + ValidationPipe.
import 'reflect-metadata';
import { ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NaiveModule } from './naive.module.js';

const app = await NestFactory.create(NaiveModule, { logger: ['error', 'warn'] });
app.useGlobalPipes(new ValidationPipe({ transform: true }));
app.enableShutdownHooks();
await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
