import { type ApiRule, describeRule, draftsOf, moved, newCondition, newRule, rulesOf, withType } from './redirect-rules';

describe("the link form's redirect rules", () => {
  const rules: ApiRule[] = [
    { url: 'https://example.com/es', conditions: [{ type: 'language', value: 'es' }] },
    {
      url: 'https://example.com/promo',
      conditions: [
        { type: 'query-param', name: 'promo' },
        { type: 'query-param', name: 'src', value: '' },
        { type: 'device', value: 'mobile' },
      ],
    },
    { url: 'https://example.com/later', conditions: [{ type: 'after-date', value: '2027-01-31T12:00:00.000Z' }] },
  ];

  it('gives back what was read: any value, a value present without one, an instant', () => {
    expect(rulesOf(draftsOf(rules))).toEqual(rules);
  });

  it('keeps a query parameter that must be present without a value apart from one with any value', () => {
    const [, promo] = draftsOf(rules);
    expect(promo.conditions.map((c) => c.match)).toEqual(['any', 'equals', 'any']);
  });

  it('sends a date as the instant the local time names, and what is not a date as typed (the API says why)', () => {
    const [, , later] = draftsOf(rules);
    expect(later.conditions[0].value).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d$/);
    expect(rulesOf([{ ...later, conditions: [{ ...later.conditions[0], value: 'soon' }] }])[0].conditions[0]).toEqual({ type: 'after-date', value: 'soon' });
  });

  it('trims the URL, the name and a value, but not the value a parameter must equal', () => {
    const rule = { ...newRule(), url: ' https://example.com/x ' };
    rule.conditions = [
      { type: 'query-param', name: ' ref ', value: ' a ', match: 'equals' },
      { type: 'country', value: ' DE ', name: '', match: 'any' },
    ];
    expect(rulesOf([rule])).toEqual([
      {
        url: 'https://example.com/x',
        conditions: [
          { type: 'query-param', name: 'ref', value: ' a ' },
          { type: 'country', value: 'DE' },
        ],
      },
    ]);
  });

  it('starts a new rule with one condition, and a chosen list with its first value', () => {
    expect(newRule().conditions).toHaveLength(1);
    expect(newCondition('device').value).toBe('ios');
    expect(newCondition('browser').value).toBe('chrome');
    expect(withType({ type: 'country', value: 'DE', name: '', match: 'any' }, 'os')).toEqual(newCondition('os'));
    const same = { type: 'country', value: 'DE', name: '', match: 'any' } as const;
    expect(withType(same, 'country')).toBe(same);
  });

  it('gives each draft its own id, so a moved rule keeps its fields', () => {
    const drafts = draftsOf(rules);
    expect(new Set(drafts.map((d) => d.id)).size).toBe(3);
  });

  it('moves a rule up or down, and nowhere past the ends', () => {
    expect(moved(['a', 'b', 'c'], 2, 0)).toEqual(['c', 'a', 'b']);
    expect(moved(['a', 'b', 'c'], 0, 1)).toEqual(['b', 'a', 'c']);
    expect(moved(['a', 'b', 'c'], 0, -1)).toEqual(['a', 'b', 'c']);
    expect(moved(['a', 'b', 'c'], 2, 3)).toEqual(['a', 'b', 'c']);
  });

  it('says a rule in words for the link page', () => {
    expect(rules.map(describeRule)).toEqual([
      'language es → https://example.com/es',
      'query promo present and query src= and device mobile → https://example.com/promo',
      'after 2027-01-31T12:00:00.000Z → https://example.com/later',
    ]);
  });
});
