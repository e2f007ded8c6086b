import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadConfig } from '@shortlink/config';
import { createApp } from '@shortlink/nest-platform';
import { SharedPorts } from '@shortlink/wiring';
import { GENERATION_API, GENERATION_PORTS, GenerationAppModule } from '../generation.module';

export interface InProcessGeneration {
  readonly app: NestFastifyApplication;
  /** One request through Fastify's inject (no socket); JSON body when given; `key` null sends none. */
  call(
    key: string | null,
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): ReturnType<NestFastifyApplication['inject']>;
  close(): Promise<void>;
}

/** The generation app in process on the embedded adapters of a fresh temp dir, with `bootstrapKey` as the operator's key. */
export async function startGenerationInProcess(bootstrapKey: string, env: Record<string, string> = {}): Promise<InProcessGeneration> {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-generation-'));
  const config = loadConfig({
    SHORTLINK_DATA_DIR: dir,
    SHORTLINK_PUBLIC_BASE_URL: 'https://sho.rt',
    SHORTLINK_BOOTSTRAP_API_KEY: bootstrapKey,
    LOG_LEVEL: 'silent',
    GENERATION_ADMIN_PORT: '0',
    ...env,
  });
  const ports = await SharedPorts.open(config, GENERATION_PORTS);
  const app = await createApp({
    name: 'generation',
    config,
    feature: GenerationAppModule.forRoot(config),
    ports: ports.bridge(GENERATION_PORTS),
    requestLog: false,
    openApi: GENERATION_API,
  });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return {
    app,
    call: (key, method, url, body, headers = {}) =>
      app.inject({
        method,
        url,
        headers: { ...(key ? { 'x-api-key': key } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        payload: body === undefined ? undefined : JSON.stringify(body),
      }),
    close: async () => {
      await app.close();
      await ports.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
