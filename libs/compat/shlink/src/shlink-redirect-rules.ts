import type { z } from 'zod';
import type { Link, RedirectCondition, RedirectRule } from '@shortlink/links-domain';
import { invalidArgument } from './shlink-problem';
import { atom } from './shlink-mapper';
import { redirectRulesListSchema, redirectRulesSetSchema, SHLINK_DEVICES, shlinkConditionSchema } from './shlink.schemas';

/**
 * Shlink's redirect rules over ours (docs/design.md, "Redirect rules"): the same ordered list, each
 * rule `{longUrl, priority, conditions}` and each condition `{type, matchKey, matchValue}` in
 * Shlink's names. Pure; LinkService checks what a set gives like any edit of `redirectRules`.
 */

export type ShlinkRedirectRulesList = z.infer<typeof redirectRulesListSchema>;
export type ShlinkRedirectCondition = z.infer<typeof shlinkConditionSchema>;
type ShlinkRulesSet = z.infer<typeof redirectRulesSetSchema>;
type ShlinkConditionInput = ShlinkRulesSet['redirectRules'][number]['conditions'][number];

/** Shlink's device types that are operating systems of ours (the others are our device classes). */
const SYSTEMS_AS_DEVICES: ReadonlySet<string> = new Set(['windows', 'macos', 'linux', 'chromeos']);

const condition = (type: ShlinkRedirectCondition['type'], matchValue: string | null, matchKey: string | null = null): ShlinkRedirectCondition => ({
  type,
  matchKey,
  matchValue,
});

/** A condition of ours in Shlink's words; Shlink has no region condition, so ours reads `geolocation-region-name`. */
export function shlinkConditionOf(c: RedirectCondition): ShlinkRedirectCondition {
  switch (c.type) {
    case 'device':
    case 'os':
      return condition('device', c.value);
    case 'language':
    case 'ip-address':
    case 'browser':
      return condition(c.type, c.value);
    case 'before-date':
    case 'after-date':
      return condition(c.type, atom(new Date(c.value)));
    case 'query-param':
      if (c.value === undefined) return condition('any-value-query-param', null, c.name);
      if (c.value === '') return condition('valueless-query-param', null, c.name);
      return condition('query-param', c.value, c.name);
    case 'country':
      return condition('geolocation-country-code', c.value);
    case 'city':
      return condition('geolocation-city-name', c.value);
    case 'region':
      return condition('geolocation-region-name', c.value);
  }
}

/** A link's rules as Shlink lists them: its own URL as `defaultLongUrl`, the rules by priority from 1. */
export function redirectRulesListOf(link: Link): ShlinkRedirectRulesList {
  return {
    defaultLongUrl: link.targetUrl,
    redirectRules: (link.redirectRules ?? []).map((rule: RedirectRule, i) => ({
      longUrl: rule.url,
      priority: i + 1,
      conditions: rule.conditions.map(shlinkConditionOf),
    })),
  };
}

/**
 * Shlink's rules as our `redirectRules` input, in the order given (Shlink's priority is the
 * position). The values are checked by LinkService; here only what Shlink's shape needs: the query
 * parameter's name, a value where the type reads one, a device Shlink knows.
 */
export function redirectRulesInputOf(body: ShlinkRulesSet): unknown[] {
  return body.redirectRules.map((rule, i) => ({
    url: rule.longUrl,
    conditions: rule.conditions.map((c, j) => conditionInputOf(c, `redirectRules.${i}.conditions.${j}`)),
  }));
}

function conditionInputOf(c: ShlinkConditionInput, at: string): unknown {
  const value = (): string => {
    if (c.matchValue === null || c.matchValue === undefined || c.matchValue.trim() === '')
      throw invalidArgument(['redirectRules'], `${at}.matchValue is required for a ${c.type} condition`);
    return c.matchValue;
  };
  const key = (): string => {
    if (c.matchKey === null || c.matchKey === undefined || c.matchKey === '')
      throw invalidArgument(['redirectRules'], `${at}.matchKey (the query parameter) is required for a ${c.type} condition`);
    return c.matchKey;
  };
  switch (c.type) {
    case 'device': {
      const device = value().trim().toLowerCase();
      if (!(SHLINK_DEVICES as readonly string[]).includes(device))
        throw invalidArgument(['redirectRules'], `${at}.matchValue must be one of ${SHLINK_DEVICES.join(', ')}`);
      return { type: SYSTEMS_AS_DEVICES.has(device) ? 'os' : 'device', value: device };
    }
    case 'language':
    case 'ip-address':
    case 'browser':
    case 'before-date':
    case 'after-date':
      return { type: c.type, value: value() };
    case 'query-param': {
      const name = key();
      if (c.matchValue === null || c.matchValue === undefined)
        throw invalidArgument(['redirectRules'], `${at}.matchValue is required for a query-param condition (any-value-query-param: any value)`);
      return { type: 'query-param', name, value: c.matchValue };
    }
    case 'any-value-query-param':
      return { type: 'query-param', name: key() };
    case 'valueless-query-param':
      return { type: 'query-param', name: key(), value: '' };
    case 'geolocation-country-code':
      return { type: 'country', value: value() };
    case 'geolocation-city-name':
      return { type: 'city', value: value() };
    case 'geolocation-region-name':
      return { type: 'region', value: value() };
  }
}
