export { type AppConfig, type Cidr, ConfigError, loadConfig, type SecretSource } from './config';
export { type ClientConfig, DEFAULT_API_URL, loadClientConfig } from './client-config';
export { CONFIGURATION_REFERENCE_PATH, renderConfigurationReference } from './reference';
export { type Group, GROUPS, type Variable, type VariableName, VARIABLES } from './variables';
