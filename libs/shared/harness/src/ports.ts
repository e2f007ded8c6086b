/** Free TCP ports on 127.0.0.1, and the public + admin ports of the apps. */
import { createServer } from 'net';

/**
 * Ports are taken below the kernel's ephemeral range (32768–60999 by default): a port the kernel
 * gave us for a moment (listen(0)) can go to one of the many outgoing connections of the test
 * servers before the app binds it, which showed up as EADDRINUSE under load. Below 32768 only
 * listeners compete; each candidate is bound once to check it, and none is handed out twice.
 */
const LOW = 20_000;
const HIGH = 32_000;
const handedOut = new Set<number>();

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port found between ${LOW} and ${HIGH} after 200 attempts`);
}

export type AppName = 'generation' | 'redirect' | 'analytics';

const url = (port: number) => `http://127.0.0.1:${port}`;

/**
 * Free ports for one app's public listener and its operator (admin) listener, as base URLs and as
 * the env that sets them (`<APP>_PORT`, `<APP>_ADMIN_PORT`). Every app process needs both: the
 * default admin ports (9080–9082) collide as soon as two instances run.
 */
export async function appPorts(app: AppName): Promise<{ base: string; admin: string; env: Record<string, string> }> {
  const [port, adminPort] = await Promise.all([freePort(), freePort()]);
  const prefix = app.toUpperCase();
  return { base: url(port), admin: url(adminPort), env: { [`${prefix}_PORT`]: String(port), [`${prefix}_ADMIN_PORT`]: String(adminPort) } };
}

export interface Endpoints {
  generation: string;
  redirect: string;
  analytics: string;
  /** The operator listeners of the three apps. */
  admin: { generation: string; redirect: string; analytics: string };
}

/** Free public and admin ports for the three apps, as endpoints and as the env that sets them. */
export async function allocateEndpoints(): Promise<{ endpoints: Endpoints; env: Record<string, string> }> {
  const [g, r, a] = await Promise.all((['generation', 'redirect', 'analytics'] as const).map(appPorts));
  return {
    endpoints: { generation: g.base, redirect: r.base, analytics: a.base, admin: { generation: g.admin, redirect: r.admin, analytics: a.admin } },
    env: { ...g.env, ...r.env, ...a.env },
  };
}
