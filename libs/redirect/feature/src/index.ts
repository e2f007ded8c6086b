export { REDIRECT_PORTS, RedirectFeatureModule } from './redirect-feature.module';
