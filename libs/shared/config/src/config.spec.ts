import { ConfigError, loadConfig } from './config';

describe('loadConfig', () => {
  it('gives the embedded profile with no environment at all', () => {
    const c = loadConfig({});
    expect(c.db.driver).toBe('sqlite');
    expect(c.cache.driver).toBe('memory');
    expect(c.bus.driver).toBe('memory');
    expect(c.olap.driver).toBe('chdb');
    expect(c.ports).toEqual({ generation: 8081, redirect: 8080, analytics: 8082 });
    expect(c.links.defaultDomain).toBe('localhost:8080');
    expect(c.links.publicBaseUrl).toBe('http://localhost:8080');
  });

  it('lists every violation at once, including unknown drivers', () => {
    let error: ConfigError | undefined;
    try {
      loadConfig({ DB_DRIVER: 'postgres', CACHE_DRIVER: 'memcached', REDIRECT_PORT: '99999' });
    } catch (e) {
      error = e as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.violations).toEqual(
      expect.arrayContaining([expect.stringMatching(/^DB_DRIVER: must be one of sqlite\|mysql, got "postgres"/), expect.stringMatching(/^CACHE_DRIVER:/), expect.stringMatching(/^REDIRECT_PORT:/)]),
    );
  });

  it('requires the servers of the real drivers it selects', () => {
    expect(() => loadConfig({ DB_DRIVER: 'mysql', CACHE_DRIVER: 'redis', BUS_DRIVER: 'kafka', OLAP_DRIVER: 'clickhouse' })).toThrow(
      /MYSQL_SHARDS: required[\s\S]*MYSQL_META_URL[\s\S]*REDIS_CLUSTER_NODES[\s\S]*KAFKA_BROKERS[\s\S]*CLICKHOUSE_URL/,
    );
  });

  it('parses the real stack settings into typed slices', () => {
    const c = loadConfig({
      DB_DRIVER: 'mysql',
      MYSQL_SHARDS: 's0=mysql://u:p@127.0.0.1:3307/a,s1=mysql://u:p@127.0.0.1:3308/b',
      MYSQL_META_URL: 'mysql://u:p@127.0.0.1:3307/meta',
      CACHE_DRIVER: 'redis',
      REDIS_CLUSTER_NODES: '127.0.0.1:7101,127.0.0.1:7102',
      SHORTLINK_PUBLIC_BASE_URL: 'https://Sho.rt/',
    });
    expect(c.db).toMatchObject({ driver: 'mysql', shards: [{ name: 's0', url: 'mysql://u:p@127.0.0.1:3307/a' }, { name: 's1', url: 'mysql://u:p@127.0.0.1:3308/b' }] });
    expect(c.cache).toEqual({ driver: 'redis', nodes: [{ host: '127.0.0.1', port: 7101 }, { host: '127.0.0.1', port: 7102 }], writeBatching: 'cork', commandTimeoutMs: 500 });
    expect(c.links.defaultDomain).toBe('sho.rt');
    expect(() => loadConfig({ DB_DRIVER: 'mysql', MYSQL_SHARDS: 'nonsense', MYSQL_META_URL: 'mysql://x/y' })).toThrow(/not name=mysql/);
  });

  it('reads the Redis client settings and lists a bad command timeout with the other violations', () => {
    const redis = { CACHE_DRIVER: 'redis', REDIS_CLUSTER_NODES: '127.0.0.1:7101' };
    expect(loadConfig({ ...redis, REDIS_WRITE_BATCHING: 'pipeline', REDIS_COMMAND_TIMEOUT_MS: '250' }).cache).toMatchObject({ writeBatching: 'pipeline', commandTimeoutMs: 250 });
    expect(() => loadConfig({ ...redis, REDIS_WRITE_BATCHING: 'true' })).toThrow(/REDIS_WRITE_BATCHING: must be one of cork\|pipeline\|off, got "true"/);
    expect(() => loadConfig({ ...redis, REDIS_COMMAND_TIMEOUT_MS: '0', DB_DRIVER: 'oracle' })).toThrow(/REDIS_COMMAND_TIMEOUT_MS[\s\S]*DB_DRIVER|DB_DRIVER[\s\S]*REDIS_COMMAND_TIMEOUT_MS/);
  });
});
