import { META_MYSQL_MIGRATIONS, META_SQLITE_MIGRATIONS } from './meta-migrations';

// A database records its migrations by name and ran them in this order: the lists the contexts
// keep, put together, must give the very order the single list of the meta database gave.
describe('the meta database migrations, assembled from the contexts', () => {
  it('are, on MySQL, the names and order a database was migrated in', () => {
    expect(META_MYSQL_MIGRATIONS.map((m) => new m().name)).toEqual([
      'CreateMeta1733130000001',
      'TenantKeysDomains1733400000000',
      'BatchRequests1733500000000',
      'ShardRing1733600000001',
      'AuditLog1733800000001',
      'DomainSettings1734190000001',
      'People1734300000001',
      'SecondFactor1734300000002',
      'Webhooks1734500000001',
      'Sso1734700000001',
      'KeyPeople1735100000001',
      'DomainOwnership1735200000001',
      'SessionClient1735250000001',
      'Safety1735300000001',
      'Conversions1735400000001',
      'StripeReceiver1735400000002',
      'ConversionSettings1735400000003',
      'ConversionTags1735400000004',
    ]);
  });

  it('are, on SQLite, the names and order a file was migrated in', () => {
    expect(META_SQLITE_MIGRATIONS.map((m) => m.name)).toEqual([
      '001_tenants_keys_sequences',
      '002_tenant_status_keys_domains',
      '003_batch_requests',
      '004_shard_ring',
      '005_domain_settings',
      '006_audit_log',
      '007_people',
      '008_second_factor',
      '009_webhooks',
      '010_sso',
      '011_key_people',
      '012_domain_ownership',
      '013_session_client',
      '014_safety',
      '015_conversions',
      '016_stripe_receiver',
      '017_conversion_settings',
      '018_conversion_tags',
    ]);
  });
});
