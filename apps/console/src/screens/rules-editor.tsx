import { useEffect, useState } from 'preact/hooks';
import type { Problem } from '../api/client';
import {
  CHOICES,
  CONDITION_LABELS,
  type ConditionDraft,
  type ConditionType,
  moved,
  newCondition,
  newRule,
  type RuleDraft,
  rulesOf,
  VALUE_HINTS,
  withType,
} from '../redirect-rules';

/** A message without the path it starts with ("redirectRules.0.url must be …" beside that field: "Must be …"). */
const unprefixed = (message: string, path: string) =>
  message.startsWith(`${path} `) ? message.charAt(path.length + 1).toUpperCase() + message.slice(path.length + 2) : message;

/** The problem's message for exactly this path (VALIDATION_FAILED's issue, or a domain error's `field`). */
function errorAt(problem: Problem | null, path: string): string | null {
  if (!problem) return null;
  const issue = problem.errors?.find((e) => e.path === path);
  if (issue) return unprefixed(issue.message, path);
  return problem.field === path ? unprefixed(problem.detail, path) : null;
}

/** Paths of a rule's fields the editor shows an error beside; anything else about the rules is said above them. */
const SHOWN = /^redirectRules\.\d+\.(url|conditions(\.\d+\.(type|name|value))?)$/;
const pathsOf = (problem: Problem | null): string[] => [
  ...(problem?.errors ?? []).map((e) => e.path),
  ...(typeof problem?.field === 'string' ? [problem.field] : []),
];

function FieldError({ id, message, field }: { id: string; message: string | null; field: string }) {
  return message ? (
    <p id={id} class="error" data-field={field} role="alert">
      {message}
    </p>
  ) : null;
}

/**
 * The link's redirect rules, in order: each a target URL and the conditions that must all hold;
 * add, edit, move up or down, remove. The form reads them from the hidden `redirectRules` field
 * (JSON of the API's rules). The API's problem+json is shown beside the field it names, until
 * the rules are rearranged (its paths would then name other rules).
 */
export function RulesEditor({ initial, problem }: { initial: RuleDraft[]; problem: Problem | null }) {
  const [rules, setRules] = useState<RuleDraft[]>(initial);
  const [shown, setShown] = useState<Problem | null>(problem);
  useEffect(() => setShown(problem), [problem]);

  const rearrange = (next: RuleDraft[]) => {
    setShown(null);
    setRules(next);
  };
  const edit = (i: number, change: (r: RuleDraft) => RuleDraft) => setRules(rules.map((r, k) => (k === i ? change(r) : r)));
  const editCondition = (i: number, j: number, change: (c: ConditionDraft) => ConditionDraft) =>
    edit(i, (r) => ({ ...r, conditions: r.conditions.map((c, k) => (k === j ? change(c) : c)) }));
  /** Focus the first of these that is there once the list is drawn again (a moved rule's button, the next field). */
  const focusLater = (...selectors: string[]) =>
    setTimeout(
      () =>
        selectors
          .map((s) => document.querySelector<HTMLElement>(s))
          .find(Boolean)
          ?.focus(),
      0,
    );

  const general = pathsOf(shown).find((p) => p.startsWith('redirectRules') && !SHOWN.test(p));
  const generalMessage = general ? errorAt(shown, general) : null;

  return (
    <fieldset id="redirect-rules" class="rules">
      <legend>Redirect rules</legend>
      <p class="hint" id="rules-hint">
        The first rule whose conditions all hold sends the visitor to its URL; when none holds, the target URL (or the A/B variants) does. Device and country
        targets are rules of one condition.
      </p>
      <input type="hidden" name="redirectRules" value={JSON.stringify(rulesOf(rules))} />
      <FieldError id="rules-error" field="redirectRules" message={generalMessage} />
      {rules.length === 0 && <p id="no-rules">No rules: every visitor goes to the target URL.</p>}
      <ol class="rule-list">
        {rules.map((rule, i) => {
          const at = `redirectRules.${i}`;
          const urlError = errorAt(shown, `${at}.url`);
          const conditionsError = errorAt(shown, `${at}.conditions`);
          const n = i + 1;
          return (
            <li key={rule.id} class="rule" data-rule={i}>
              <fieldset>
                <legend>Rule {n}</legend>
                <div class="field">
                  <label for={`rule-${rule.id}-url`}>Sends to</label>
                  <input
                    id={`rule-${rule.id}-url`}
                    type="url"
                    placeholder="https://example.com/es"
                    value={rule.url}
                    aria-invalid={urlError ? 'true' : undefined}
                    aria-describedby={urlError ? `rule-${rule.id}-url-error` : undefined}
                    onInput={(e) => {
                      const url = e.currentTarget.value;
                      edit(i, (r) => ({ ...r, url }));
                    }}
                  />
                  <FieldError id={`rule-${rule.id}-url-error`} field={`${at}.url`} message={urlError} />
                </div>
                <p class="conditions-title" id={`rule-${rule.id}-when`}>
                  When all of these hold:
                </p>
                <FieldError id={`rule-${rule.id}-conditions-error`} field={`${at}.conditions`} message={conditionsError} />
                <ul class="conditions" aria-labelledby={`rule-${rule.id}-when`}>
                  {rule.conditions.map((c, j) => (
                    <Condition
                      key={`${rule.id}-${j}`}
                      id={`rule-${rule.id}-c${j}`}
                      at={`${at}.conditions.${j}`}
                      condition={c}
                      problem={shown}
                      onChange={(change) => editCondition(i, j, change)}
                      onRemove={
                        rule.conditions.length > 1
                          ? () => {
                              setShown(null);
                              edit(i, (r) => ({ ...r, conditions: r.conditions.filter((_, k) => k !== j) }));
                              focusLater(`#rule-${rule.id}-add-condition`);
                            }
                          : undefined
                      }
                      ruleNumber={n}
                      conditionNumber={j + 1}
                    />
                  ))}
                </ul>
                <div class="actions rule-actions">
                  <button
                    type="button"
                    class="secondary small"
                    id={`rule-${rule.id}-add-condition`}
                    onClick={() => {
                      edit(i, (r) => ({ ...r, conditions: [...r.conditions, newCondition()] }));
                      focusLater(`#rule-${rule.id}-c${rule.conditions.length}-type`);
                    }}
                  >
                    Add a condition
                  </button>
                  <button
                    type="button"
                    class="secondary small move-up"
                    aria-label={`Move rule ${n} up`}
                    disabled={i === 0}
                    onClick={() => {
                      rearrange(moved(rules, i, i - 1));
                      focusLater(`[data-rule="${i - 1}"] .move-up:not([disabled])`, `[data-rule="${i - 1}"] .move-down`);
                    }}
                  >
                    Up
                  </button>
                  <button
                    type="button"
                    class="secondary small move-down"
                    aria-label={`Move rule ${n} down`}
                    disabled={i === rules.length - 1}
                    onClick={() => {
                      rearrange(moved(rules, i, i + 1));
                      focusLater(`[data-rule="${i + 1}"] .move-down:not([disabled])`, `[data-rule="${i + 1}"] .move-up`);
                    }}
                  >
                    Down
                  </button>
                  <button
                    type="button"
                    class="danger small"
                    aria-label={`Remove rule ${n}`}
                    onClick={() => {
                      rearrange(rules.filter((_, k) => k !== i));
                      focusLater('#add-rule');
                    }}
                  >
                    Remove
                  </button>
                </div>
              </fieldset>
            </li>
          );
        })}
      </ol>
      <button
        type="button"
        class="secondary"
        id="add-rule"
        onClick={() => {
          const rule = newRule();
          setRules([...rules, rule]);
          focusLater(`#rule-${rule.id}-url`);
        }}
      >
        Add a rule
      </button>
    </fieldset>
  );
}

function Condition(props: {
  id: string;
  at: string;
  condition: ConditionDraft;
  problem: Problem | null;
  onChange: (change: (c: ConditionDraft) => ConditionDraft) => void;
  onRemove?: () => void;
  ruleNumber: number;
  conditionNumber: number;
}) {
  const { id, at, condition: c, problem, onChange } = props;
  const typeError = errorAt(problem, `${at}.type`);
  const nameError = errorAt(problem, `${at}.name`);
  const valueError = errorAt(problem, `${at}.value`);
  const choices = CHOICES[c.type];
  const hint = VALUE_HINTS[c.type];
  const date = c.type === 'before-date' || c.type === 'after-date';
  const described = (...ids: Array<string | false | null | undefined>) => ids.filter(Boolean).join(' ') || undefined;
  const valueInput = (label: string) => (
    <div class="field">
      <label for={`${id}-value`}>{label}</label>
      {choices ? (
        <select id={`${id}-value`} value={c.value} onChange={(e) => onChange((x) => ({ ...x, value: e.currentTarget.value }))}>
          {choices.map(([v, name]) => (
            <option key={v} value={v}>
              {name}
            </option>
          ))}
        </select>
      ) : (
        <input
          id={`${id}-value`}
          type={date ? 'datetime-local' : 'text'}
          autocomplete="off"
          value={c.value}
          aria-invalid={valueError ? 'true' : undefined}
          aria-describedby={described(hint && `${id}-hint`, valueError && `${id}-value-error`)}
          onInput={(e) => {
            const value = e.currentTarget.value;
            onChange((x) => ({ ...x, value }));
          }}
        />
      )}
      {hint && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
      <FieldError id={`${id}-value-error`} field={`${at}.value`} message={valueError} />
    </div>
  );
  return (
    <li class="condition" data-condition={props.conditionNumber - 1}>
      <div class="row wrap">
        <div class="field">
          <label for={`${id}-type`}>Condition</label>
          <select
            id={`${id}-type`}
            value={c.type}
            aria-invalid={typeError ? 'true' : undefined}
            onChange={(e) => {
              const type = e.currentTarget.value as ConditionType;
              onChange((x) => withType(x, type));
            }}
          >
            {CONDITION_LABELS.map(([t, label]) => (
              <option key={t} value={t}>
                {label}
              </option>
            ))}
          </select>
          <FieldError id={`${id}-type-error`} field={`${at}.type`} message={typeError} />
        </div>
        {c.type === 'query-param' ? (
          <>
            <div class="field">
              <label for={`${id}-name`}>Parameter</label>
              <input
                id={`${id}-name`}
                autocomplete="off"
                value={c.name}
                aria-invalid={nameError ? 'true' : undefined}
                aria-describedby={nameError ? `${id}-name-error` : undefined}
                onInput={(e) => {
                  const name = e.currentTarget.value;
                  onChange((x) => ({ ...x, name }));
                }}
              />
              <FieldError id={`${id}-name-error`} field={`${at}.name`} message={nameError} />
            </div>
            <div class="field">
              <label for={`${id}-match`}>Matches</label>
              <select
                id={`${id}-match`}
                value={c.match}
                onChange={(e) => {
                  const match = e.currentTarget.value as ConditionDraft['match'];
                  onChange((x) => ({ ...x, match }));
                }}
              >
                <option value="any">present, any value</option>
                <option value="equals">equal to</option>
              </select>
            </div>
            {c.match === 'equals' && valueInput('Value')}
          </>
        ) : (
          valueInput(date ? 'Date and time' : 'Value')
        )}
      </div>
      {props.onRemove && (
        <button type="button" class="link small" aria-label={`Remove condition ${props.conditionNumber} of rule ${props.ruleNumber}`} onClick={props.onRemove}>
          Remove condition
        </button>
      )}
    </li>
  );
}
