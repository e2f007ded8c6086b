import type { AppConfig } from '@shortlink/config';
import type { HealthProbe, PortGauge } from '@shortlink/core';

/**
 * How to build one port of the platform: `open` picks the adapter for the configured driver (an
 * unknown driver cannot get here: the config schema refuses it at boot). The opened value is
 * bound to the port's domain tokens, closed at shutdown in the reverse order of opening, and
 * reports health through its probes.
 */
export interface PortSpec<T> {
  /** Names the port in logs and errors. */
  readonly name: string;
  /** Domain DI tokens bound to the opened value, or to a part of it. */
  readonly provides: ReadonlyArray<readonly [token: symbol, pick: (value: NoInfer<T>) => unknown]>;
  open(config: AppConfig): T | Promise<T>;
  close?(value: NoInfer<T>): Promise<void>;
  probes?(value: NoInfer<T>): readonly HealthProbe[];
  /** Gauges each app that opened the port publishes at /metrics. */
  gauges?(value: NoInfer<T>): readonly PortGauge[];
}

/** A port once opened: what each of its tokens is bound to, how to close it, how to probe it. */
export interface OpenPort {
  readonly name: string;
  readonly bindings: ReadonlyMap<symbol, unknown>;
  close(): Promise<void>;
  probes(): readonly HealthProbe[];
  gauges(): readonly PortGauge[];
}

/** A port of the catalog, its value's type known only inside. */
export interface Port {
  readonly name: string;
  readonly tokens: readonly symbol[];
  open(config: AppConfig): Promise<OpenPort>;
}

export function portSpec<T>(spec: PortSpec<T>): Port {
  return {
    name: spec.name,
    tokens: spec.provides.map(([token]) => token),
    open: async (config) => {
      const value = await spec.open(config);
      return {
        name: spec.name,
        bindings: new Map(spec.provides.map(([token, pick]) => [token, pick(value)])),
        close: async () => spec.close?.(value),
        probes: () => spec.probes?.(value) ?? [],
        gauges: () => spec.gauges?.(value) ?? [],
      };
    },
  };
}

/** Binds a token to the opened value itself. */
export const itself = <T>(value: T): T => value;
