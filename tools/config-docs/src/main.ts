import { writeFileSync } from 'fs';
import { join } from 'path';
import { CONFIGURATION_REFERENCE_PATH, renderConfigurationReference } from '@shortlink/config';

// npm run config:docs: writes docs/configuration.md from the variable declarations (libs/shared/config).
const target = join(__dirname, '..', '..', '..', CONFIGURATION_REFERENCE_PATH);
writeFileSync(target, renderConfigurationReference());
console.log(`wrote ${CONFIGURATION_REFERENCE_PATH}`);
