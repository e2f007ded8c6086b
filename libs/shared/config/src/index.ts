export { type AppConfig, type Cidr, ConfigError, loadConfig, type SecretSource } from './config';
