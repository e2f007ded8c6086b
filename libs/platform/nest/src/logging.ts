import { DynamicModule } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';

/** JSON logs (pino) tagged with the app; request logs only for errors to keep the hot path quiet. */
export function loggingModule(app: string, level: string): DynamicModule {
  return LoggerModule.forRoot({
    pinoHttp: {
      level,
      base: { app },
      autoLogging: { ignore: (req) => !req.url?.startsWith('/api/') },
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
      redact: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie'],
    },
  });
}
