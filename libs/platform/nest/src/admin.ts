import { DynamicModule, Inject, Injectable, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createServer, Server } from 'http';
import { AddressInfo } from 'net';
import { APP_LOGGER } from './app-tokens';
import type { ContextLogger, PinoNestLogger } from './logging';
import { problem } from './problem-details';

export interface AdminReply {
  readonly status?: number;
  /** Default application/json for an object body, text/plain for a string. */
  readonly contentType?: string;
  readonly body: string | object;
}

export type AdminHandler = (query: URLSearchParams) => AdminReply | Promise<AdminReply>;

/** The operator endpoints of one app, registered by the modules that own them. */
@Injectable()
export class AdminRoutes {
  private readonly routes = new Map<string, AdminHandler>();

  add(path: string, handler: AdminHandler): void {
    if (this.routes.has(path)) throw new Error(`admin route ${path} is registered twice`);
    this.routes.set(path, handler);
  }

  find(path: string): AdminHandler | undefined {
    return this.routes.get(path);
  }

  get paths(): string[] {
    return [...this.routes.keys()].sort();
  }
}

export interface AdminListenerOptions {
  readonly app: string;
  readonly host: string;
  /** 0 picks a free port (tests). */
  readonly port: number;
}

export const ADMIN_OPTIONS = Symbol('ADMIN_OPTIONS');

/**
 * The operator listener: /metrics, /internal/*, /health/details on their own port, bound to
 * loopback unless ADMIN_HOST says otherwise (docs/design.md, "Security model"). GET only; every
 * other answer is problem+json. It starts with the app and stops with it.
 */
@Injectable()
export class AdminListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private server: Server | null = null;

  constructor(
    @Inject(AdminRoutes) private readonly routes: AdminRoutes,
    @Inject(ADMIN_OPTIONS) private readonly options: AdminListenerOptions,
    @Inject(APP_LOGGER) private readonly appLogger: PinoNestLogger,
  ) {}

  private get logger(): ContextLogger {
    return this.appLogger.scoped('Admin');
  }

  async onApplicationBootstrap(): Promise<void> {
    const server = createServer({ headersTimeout: 10_000, requestTimeout: 10_000 }, (req, res) => {
      const url = new URL(req.url ?? '/', 'http://admin');
      const send = (status: number, contentType: string, body: string) => {
        res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : body);
      };
      const fail = (status: number, code: string, detail: string) =>
        send(status, 'application/problem+json', JSON.stringify(problem(status, code, detail, url.pathname)));
      const handler = this.routes.find(url.pathname);
      if (!handler) return fail(404, 'ROUTE_NOT_FOUND', `no admin route here; routes: ${this.routes.paths.join(', ')}`);
      if (req.method !== 'GET' && req.method !== 'HEAD') return fail(405, 'METHOD_NOT_ALLOWED', 'admin routes answer GET only');
      Promise.resolve()
        .then(() => handler(url.searchParams))
        .then(
          (reply) => {
            const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
            send(reply.status ?? 200, reply.contentType ?? (typeof reply.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json'), text);
          },
          (error) => {
            this.logger.error(`admin route ${url.pathname} failed: ${(error as Error).message}`);
            fail(500, 'INTERNAL', 'internal error');
          },
        );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.logger.log(`${this.options.app} admin listener on ${this.url}`);
  }

  /** http://host:port of the listener once started. */
  get url(): string {
    const address = this.server?.address() as AddressInfo | null;
    if (!address) throw new Error('admin listener not started');
    return `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** One admin listener per app; global so that any module of the app can add its routes. */
@Module({})
export class AdminModule {
  static forApp(options: AdminListenerOptions): DynamicModule {
    return {
      module: AdminModule,
      global: true,
      providers: [{ provide: ADMIN_OPTIONS, useValue: options }, AdminRoutes, AdminListener],
      exports: [AdminRoutes, AdminListener],
    };
  }
}
