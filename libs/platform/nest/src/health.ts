import { Controller, Get, Inject, Injectable, Module, OnModuleInit, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { HealthProbe } from '@shortlink/core';
import { AdminRoutes } from './admin';

/** `() => readonly HealthProbe[]`: the probes of the ports an app opened (bound by the wiring). */
export const HEALTH_PROBES = Symbol('HEALTH_PROBES');

const PROBE_TIMEOUT_MS = 2000;

export interface ProbeResult {
  readonly name: string;
  readonly up: boolean;
  readonly error?: string;
  readonly ms: number;
  /** false: a failure shows here but does not fail /health. */
  readonly critical?: false;
  readonly details?: Readonly<Record<string, unknown>>;
}

/** Runs every probe of the app at once, each bounded by a timeout. */
@Injectable()
export class HealthChecker {
  constructor(@Inject(HEALTH_PROBES) private readonly probes: () => readonly HealthProbe[]) {}

  async check(): Promise<{ up: boolean; probes: ProbeResult[] }> {
    const probes = await Promise.all(
      this.probes().map(async (probe): Promise<ProbeResult> => {
        const t0 = Date.now();
        const details = { ...(probe.critical === false ? { critical: false as const } : {}), ...(probe.details ? { details: probe.details() } : {}) };
        try {
          await withTimeout(probe.check(), PROBE_TIMEOUT_MS);
          return { name: probe.name, up: true, ms: Date.now() - t0, ...details };
        } catch (error) {
          return { name: probe.name, up: false, error: (error as Error).message, ms: Date.now() - t0, ...details };
        }
      }),
    );
    return { up: probes.every((p) => p.up || p.critical === false), probes };
  }
}

/**
 * `GET /health` on the public port, for load balancers and orchestrators: 200 or 503, and only
 * that. Which dependency failed and why (names of shards, addresses in error messages) is for
 * operators, at /health/details on the admin listener.
 */
@Controller()
export class HealthController {
  constructor(@Inject(HealthChecker) private readonly checker: HealthChecker) {}

  @Get('health')
  async health(@Res() reply: FastifyReply): Promise<void> {
    const { up } = await this.checker.check();
    reply
      .status(up ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ status: up ? 'ok' : 'unavailable' });
  }
}

@Injectable()
class HealthDetailsRoute implements OnModuleInit {
  constructor(
    @Inject(HealthChecker) private readonly checker: HealthChecker,
    @Inject(AdminRoutes) private readonly routes: AdminRoutes,
  ) {}

  onModuleInit(): void {
    this.routes.add('/health/details', async () => {
      const { up, probes } = await this.checker.check();
      return { status: up ? 200 : 503, body: { status: up ? 'ok' : 'unavailable', probes } };
    });
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    p.then(
      (v) => (clearTimeout(t), resolve(v)),
      (e) => (clearTimeout(t), reject(e)),
    );
  });
}

/** Public `/health` and admin `/health/details` over the probes the app's ports provide (HEALTH_PROBES). */
@Module({ controllers: [HealthController], providers: [HealthChecker, HealthDetailsRoute] })
export class HealthModule {}
