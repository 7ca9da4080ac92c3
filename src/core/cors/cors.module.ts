import { Module } from '@nestjs/common';
import { CorsPolicy } from './cors.policy.js';

/** CORS per consumer; `configureApp` runs the policy in the onRequest hook. */
@Module({ providers: [CorsPolicy], exports: [CorsPolicy] })
export class CorsModule {}
