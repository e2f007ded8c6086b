import 'reflect-metadata';
import { GENERATION_API, GENERATION_PORTS, GenerationFeatureModule } from '@shortlink/generation-feature';
import { YOURLS_PORTS, yourlsCompat } from '@shortlink/yourls-compat';
import { runApp } from '@shortlink/wiring';

runApp(
  'generation',
  (config) => GenerationFeatureModule.forRoot(config, { extensions: [yourlsCompat()] }),
  [...GENERATION_PORTS, ...YOURLS_PORTS],
  GENERATION_API,
);
