import { Controller, DynamicModule, Get, Inject, Module } from '@nestjs/common';
import { HealthCheck, HealthCheckService, HealthIndicatorService, TerminusModule } from '@nestjs/terminus';
import { HealthProbe } from '@shortlink/core';

export const HEALTH_PROBES = Symbol('HEALTH_PROBES');

@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    @Inject(HEALTH_PROBES) private readonly probes: () => readonly HealthProbe[],
  ) {}

  /** 200 when every dependency of this app answers, 503 with the failing ones otherwise. */
  @Get('health')
  @HealthCheck()
  check() {
    return this.health.check(
      this.probes().map((probe) => async () => {
        const indicator = this.indicators.check(probe.name);
        try {
          await withTimeout(probe.check(), 2000);
          return indicator.up();
        } catch (error) {
          return indicator.down({ message: (error as Error).message });
        }
      }),
    );
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    p.then((v) => (clearTimeout(t), resolve(v)), (e) => (clearTimeout(t), reject(e)));
  });
}

@Module({})
export class HealthModule {
  static withProbes(probes: () => readonly HealthProbe[]): DynamicModule {
    return { module: HealthModule, imports: [TerminusModule.forRoot({ logger: false })], controllers: [HealthController], providers: [{ provide: HEALTH_PROBES, useValue: probes }] };
  }
}
