export { type AppConfig, type Cidr, ConfigError, loadConfig, type SecretSource } from './config';
export { type ClientConfig, DEFAULT_API_URL, loadClientConfig } from './client-config';
