export { portsModule, SharedPorts, withPorts } from './ports-module';
export { ringStoreFor, ShardCatalog } from './ports/links.port';
export { runApp } from './run-app';
