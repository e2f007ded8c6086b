// Runs the TypeScript sources directly: swc compiles on load (with decorator metadata,
// which Nest's DI needs) and resolves the @shortlink/* path aliases of tsconfig.base.json.
process.env.SWC_NODE_PROJECT = process.env.SWC_NODE_PROJECT || require('path').join(__dirname, '..', 'tsconfig.base.json');
require('@swc-node/register');
