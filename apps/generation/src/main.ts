import 'reflect-metadata';
import { GENERATION_API, GENERATION_PORTS, GenerationFeatureModule } from '@shortlink/generation-feature';
import { BITLY_PORTS, bitlyCompat } from '@shortlink/bitly-compat';
import { YOURLS_PORTS, yourlsCompat } from '@shortlink/yourls-compat';
import { runApp } from '@shortlink/wiring';

runApp(
  'generation',
  (config) => GenerationFeatureModule.forRoot(config, { extensions: [yourlsCompat(), bitlyCompat()] }),
  [...new Set([...GENERATION_PORTS, ...YOURLS_PORTS, ...BITLY_PORTS])],
  GENERATION_API,
);
