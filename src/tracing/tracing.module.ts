import { Global, Module } from '@nestjs/common';
import { TracingService } from './tracing.service.js';
import { TRACING_STAGES } from './tracing.tokens.js';

/** W3C trace context across the hop, and OpenTelemetry span export when configured. */
@Global()
@Module({
  providers: [TracingService, { provide: TRACING_STAGES, useExisting: TracingService }],
  exports: [TracingService, TRACING_STAGES],
})
export class TracingModule {}
