export { ConfigError, loadConfig } from './config';
export type { AppConfig, Cidr, SecretSource } from './config';
