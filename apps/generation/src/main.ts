import 'reflect-metadata';
import { GENERATION_API, GENERATION_PORTS, GenerationFeatureModule } from '@shortlink/generation-feature';
import { runApp } from '@shortlink/wiring';

runApp('generation', (config) => GenerationFeatureModule.forRoot(config), GENERATION_PORTS, GENERATION_API);
