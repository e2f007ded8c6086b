import 'reflect-metadata';
import { GENERATION_API, GENERATION_PORTS, GenerationFeatureModule } from '@shortlink/generation-feature';
import { SHLINK_PORTS, shlinkCompat } from '@shortlink/shlink-compat';
import { YOURLS_PORTS, yourlsCompat } from '@shortlink/yourls-compat';
import { runApp } from '@shortlink/wiring';

runApp(
  'generation',
  (config) => GenerationFeatureModule.forRoot(config, { extensions: [yourlsCompat(), shlinkCompat()] }),
  [...new Set([...GENERATION_PORTS, ...YOURLS_PORTS, ...SHLINK_PORTS])],
  GENERATION_API,
);
