// The tenants context's API (docs/design.md, "Tenants, keys and plans").
export { BootstrapOutcome, TENANTS_PORTS, TenantsModule, type TenantsOptions } from './tenants.module';
