import { readFileSync } from 'fs';
import { join } from 'path';
import { CONFIGURATION_REFERENCE_PATH, renderConfigurationReference } from './reference';
import { VARIABLES } from './variables';

const ROOT = join(__dirname, '..', '..', '..', '..');

describe('the configuration reference (docs/configuration.md)', () => {
  it('is what the declarations make: run `npm run config:docs` after changing a variable', () => {
    const written = readFileSync(join(ROOT, CONFIGURATION_REFERENCE_PATH), 'utf8');
    expect(written).toBe(renderConfigurationReference());
  });

  it('lists every variable once, with a description', () => {
    const reference = renderConfigurationReference();
    for (const [name, variable] of Object.entries(VARIABLES)) {
      expect(reference.split(`\n| \`${name}\``).length - 1).toBe(1);
      expect(variable.description.length).toBeGreaterThan(10);
    }
  });

  it('shows no value of a secret, only how it is made', () => {
    const secrets = Object.entries(VARIABLES).filter(([, v]) => 'secret' in v && v.secret);
    expect(secrets.map(([name]) => name)).toEqual(expect.arrayContaining(['SHORTLINK_CODE_SECRET', 'SHORTLINK_VISITOR_SECRET', 'SHORTLINK_BOOTSTRAP_API_KEY']));
    for (const [, variable] of secrets) expect('default' in variable ? variable.default : '').toBe('');
  });
});
