import { AppConfig } from '@shortlink/config';

/**
 * What `npm start` prints once the three apps listen: where each one is, the console people sign
 * in to, the operator key of a first run (shown this once) and commands to paste.
 */
export function startBanner(config: AppConfig, generatedKey: string | null): string {
  const { host } = config.runtime;
  const key = generatedKey ?? '<your API key>';
  const generation = `http://${host}:${config.ports.generation}`;
  const redirect = `http://${host}:${config.ports.redirect}`;
  const analytics = `http://${host}:${config.ports.analytics}`;
  // The console's address as configured (SHORTLINK_CONSOLE_URL, by default the generation app's
  // /console on localhost): the one invitations and single sign-on send people to, so the session
  // cookie is set on the host they come back to.
  const consoleUrl = config.people.sso.successUrl;
  return (
    [
      '',
      'shortlink is running (embedded profile: ' +
        `${config.db.driver} shards, ${config.cache.driver} cache, ${config.bus.driver} bus, ${config.olap.driver} analytics` +
        `, data in ${config.runtime.dataDir})`,
      `  console     ${consoleUrl}`,
      `  generation  ${generation}   (API docs: ${generation}/docs)`,
      `  redirect    ${redirect}`,
      `  analytics   ${analytics}   (dashboard: ${analytics}/dashboard, API docs: ${analytics}/docs)`,
      `  operators   http://${config.admin.host}:${config.admin.ports.generation} · :${config.admin.ports.redirect} · :${config.admin.ports.analytics} (/metrics, /health/details, /internal/*)`,
      '',
      generatedKey
        ? `Your API key (shown this once; only its hash is stored): ${generatedKey}`
        : 'Use the API key printed at the first start, or the SHORTLINK_BOOTSTRAP_API_KEY you set.',
      '',
      'Try it:',
      `  curl -s -X POST ${generation}/api/v1/links -H 'content-type: application/json' -H 'x-api-key: ${key}' -d '{"url":"https://example.com/hello"}'`,
      `  curl -si ${redirect}/<code>`,
      `  curl -s -H 'x-api-key: ${key}' ${analytics}/api/v1/links/<code>/stats`,
      '',
    ].join('\n') + '\n'
  );
}
