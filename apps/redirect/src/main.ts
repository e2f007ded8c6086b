import 'reflect-metadata';
import { REDIRECT_PORTS, RedirectFeatureModule } from '@shortlink/redirect-feature';
import { runApp } from '@shortlink/wiring';

runApp('redirect', (config) => RedirectFeatureModule.forRoot(config), REDIRECT_PORTS);
