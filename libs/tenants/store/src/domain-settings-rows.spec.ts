import { settingsFromRow } from './domain-settings-rows';

describe('a domain settings row', () => {
  it('drops the logo URL a row of before logos were carried has (the pages never hot-link it), keeping the rest of the branding', () => {
    const row = {
      domain: 'go.acme.test',
      version: 3,
      updated_at: 0,
      settings: JSON.stringify({ branding: { name: 'Acme', logoUrl: 'https://cdn.acme.example/l.png', accentColor: '#ff6600' } }),
    };
    expect(settingsFromRow(row).branding).toEqual({ name: 'Acme', logo: null, accentColor: '#ff6600' });
    const onlyUrl = { ...row, settings: JSON.stringify({ branding: { logoUrl: 'https://cdn.acme.example/l.png' } }) };
    expect(settingsFromRow(onlyUrl).branding).toBeNull();
  });
});
