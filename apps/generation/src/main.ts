import 'reflect-metadata';
import { GENERATION_API, GENERATION_PORTS, GenerationAppModule } from '@shortlink/generation-composition';
import { BITLY_PORTS, bitlyCompat } from '@shortlink/bitly-compat';
import { SHLINK_PORTS, shlinkCompat } from '@shortlink/shlink-compat';
import { YOURLS_PORTS, yourlsCompat } from '@shortlink/yourls-compat';
import { runApp } from '@shortlink/wiring';

runApp(
  'generation',
  (config) => GenerationAppModule.forRoot(config, { extensions: [yourlsCompat(), shlinkCompat(), bitlyCompat()] }),
  [...new Set([...GENERATION_PORTS, ...YOURLS_PORTS, ...SHLINK_PORTS, ...BITLY_PORTS])],
  GENERATION_API,
);
