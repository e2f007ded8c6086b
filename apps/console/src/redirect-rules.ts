import type { Schemas } from './api/client';

/**
 * The link form's redirect rules as a person edits them, and the API's `redirectRules` they are
 * (libs/links/domain/src/redirect-rules.ts: the first rule whose conditions all hold gives the
 * target). A draft keeps what is typed as typed; the API checks it and says what is wrong where.
 */
export type ApiRule = Schemas['RedirectRule'];
export type ApiCondition = ApiRule['conditions'][number];
export type ConditionType = ApiCondition['type'];

export interface ConditionDraft {
  type: ConditionType;
  /** The value as typed or chosen (a date as the datetime-local field's local time). */
  value: string;
  /** query-param: the parameter's name. */
  name: string;
  /** query-param: any value (`any`) or one equal to `value` (`equals`; empty: present without a value). */
  match: 'any' | 'equals';
}

export interface RuleDraft {
  /** Stable across reorders, for the list's keys and the fields' ids. */
  id: number;
  url: string;
  conditions: ConditionDraft[];
}

/** Each condition type as the form names it, in the order it offers them. */
export const CONDITION_LABELS: ReadonlyArray<readonly [ConditionType, string]> = [
  ['language', 'Language'],
  ['query-param', 'Query parameter'],
  ['device', 'Device'],
  ['os', 'Operating system'],
  ['browser', 'Browser'],
  ['country', 'Country'],
  ['region', 'Region'],
  ['city', 'City'],
  ['ip-address', 'IP address'],
  ['before-date', 'Before'],
  ['after-date', 'After'],
];

/** The values a device, os or browser condition may take, with their names (the API's lists). */
export const CHOICES: Partial<Record<ConditionType, ReadonlyArray<readonly [string, string]>>> = {
  device: [
    ['ios', 'iOS'],
    ['android', 'Android'],
    ['mobile', 'Mobile (iOS or Android)'],
    ['desktop', 'Desktop (any other)'],
  ],
  os: [
    ['windows', 'Windows'],
    ['macos', 'macOS'],
    ['linux', 'Linux'],
    ['chromeos', 'ChromeOS'],
    ['ios', 'iOS'],
    ['android', 'Android'],
  ],
  browser: [
    ['chrome', 'Chrome'],
    ['firefox', 'Firefox'],
    ['edge', 'Edge'],
    ['safari', 'Safari'],
    ['opera', 'Opera'],
    ['android_browser', 'Android browser'],
  ],
};

/** What a value field asks for, by type (its hint). */
export const VALUE_HINTS: Partial<Record<ConditionType, string>> = {
  language: 'de takes every German, de-AT only that one',
  country: 'Two letters, e.g. DE',
  region: 'As the IP database spells it, e.g. Bavaria',
  city: 'As the IP database spells it, e.g. Munich',
  'ip-address': 'An address, a block (10.0.0.0/8) or 192.168.*.*',
};

const isDate = (type: ConditionType) => type === 'before-date' || type === 'after-date';

/** datetime-local's value of an ISO instant, in local time. */
export const localDateTime = (iso: string): string => {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

let nextId = 0;
export const newCondition = (type: ConditionType = 'query-param'): ConditionDraft => ({
  type,
  value: CHOICES[type]?.[0][0] ?? '',
  name: '',
  match: 'any',
});
export const newRule = (): RuleDraft => ({ id: ++nextId, url: '', conditions: [newCondition()] });

/** A condition changed to another type: its value starts again (a device's value is no country). */
export const withType = (c: ConditionDraft, type: ConditionType): ConditionDraft => (c.type === type ? c : newCondition(type));

/** The drafts of a link's rules, as read from the API. */
export function draftsOf(rules: readonly ApiRule[] | null | undefined): RuleDraft[] {
  return (rules ?? []).map((rule) => ({
    id: ++nextId,
    url: rule.url,
    conditions: rule.conditions.map((c): ConditionDraft => {
      if (c.type === 'query-param') return { type: c.type, name: c.name, value: c.value ?? '', match: c.value === undefined ? 'any' : 'equals' };
      return { type: c.type, name: '', match: 'any', value: isDate(c.type) ? localDateTime(c.value) : c.value };
    }),
  }));
}

/** The API's `redirectRules` of the drafts, in their order (a date as an instant; what is typed otherwise as is, for the API to check). */
export function rulesOf(drafts: readonly RuleDraft[]): ApiRule[] {
  return drafts.map((rule) => ({
    url: rule.url.trim(),
    conditions: rule.conditions.map((c): ApiCondition => {
      if (c.type === 'query-param') return c.match === 'any' ? { type: c.type, name: c.name.trim() } : { type: c.type, name: c.name.trim(), value: c.value };
      if (isDate(c.type)) {
        const d = new Date(c.value);
        return { type: c.type, value: c.value && !Number.isNaN(d.getTime()) ? d.toISOString() : c.value };
      }
      return { type: c.type, value: c.value.trim() } as ApiCondition;
    }),
  }));
}

/** The drafts with the one at `from` moved to `to` (its neighbours shift). */
export function moved<T>(list: readonly T[], from: number, to: number): T[] {
  if (to < 0 || to >= list.length || from === to) return [...list];
  const next = [...list];
  const [item] = next.splice(from, 1);
  next.splice(to, 0, item);
  return next;
}

/** A rule in words, for the link's page: `Language es and query utm=x → https://…`. */
export function describeRule(rule: ApiRule): string {
  const label = (t: ConditionType) => CONDITION_LABELS.find(([k]) => k === t)?.[1] ?? t;
  const parts = rule.conditions.map((c) => {
    if (c.type === 'query-param') return c.value === undefined ? `query ${c.name} present` : `query ${c.name}=${c.value}`;
    return `${label(c.type).toLowerCase()} ${c.value}`;
  });
  return `${parts.join(' and ')} → ${rule.url}`;
}
