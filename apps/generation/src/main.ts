import 'reflect-metadata';
import { GENERATION_API, GENERATION_PORTS, GenerationFeatureModule } from '@shortlink/generation-feature';
import { SHLINK_COMPAT, SHLINK_PORTS } from '@shortlink/shlink-compat';
import { runApp } from '@shortlink/wiring';

runApp(
  'generation',
  (config) => GenerationFeatureModule.forRoot(config, { extensions: [SHLINK_COMPAT] }),
  [...GENERATION_PORTS, ...SHLINK_PORTS],
  GENERATION_API,
);
