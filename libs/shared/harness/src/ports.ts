/** Free TCP ports on 127.0.0.1, and the public + admin ports of the apps. */
import { createServer } from 'net';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
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
