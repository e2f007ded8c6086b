import { GROUPS, SWITCH_SPELLINGS, type Variable, VARIABLES } from './variables';

/** Where the reference lives, from the repository's root; `npm run config:docs` writes it. */
export const CONFIGURATION_REFERENCE_PATH = 'docs/configuration.md';

const anchorOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-');

/** A table cell: pipes escaped, no line breaks. */
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

function defaultOf(variable: Variable): string {
  if (variable.derivedDefault !== undefined) return variable.derivedDefault;
  if (variable.default === undefined) return '—';
  return variable.default === '' ? 'empty' : `\`${variable.default}\``;
}

/**
 * docs/configuration.md, made from the declarations (variables.ts): a table per group, every
 * variable once, secrets marked. A spec compares the file with this, so the document cannot drift.
 */
export function renderConfigurationReference(): string {
  const entries = Object.entries(VARIABLES) as [string, Variable][];
  const lines: string[] = [
    '# Configuration',
    '',
    '<!-- Generated from libs/shared/config/src/variables.ts by `npm run config:docs`; edit the declarations there, not this file. -->',
    '',
    '[← README](../README.md)',
    '',
    'Every setting is an environment variable. The apps read them once at boot through one schema',
    '(`libs/shared/config`): a bad value, or a variable a driver needs and did not get, stops the boot',
    'with every violation listed. The defaults are the embedded profile (`npm start`, no server needed);',
    '`deploy/local/.run/stack.env` and `deploy/` show the settings of the real stack.',
    '',
    `Switches take exactly ${SWITCH_SPELLINGS.map((s) => `\`${s}\``).join(', ')}; any other spelling fails the boot.`,
    'Durations are in the unit their name ends with (`_MS`, `_SECONDS`, `_MINUTES`, `_HOURS`, `_DAYS`).',
    'Variables marked **secret** carry keys or passwords: keep them in a secret store (the Kubernetes',
    'manifests put them in the `shortlink-secrets` Secret); they are never printed or logged.',
    '',
    `${entries.length} variables in ${GROUPS.length} groups:`,
    '',
    ...GROUPS.map((group) => `- [${group}](#${anchorOf(group)})`),
  ];
  for (const group of GROUPS) {
    lines.push('', `## ${group}`, '', '| variable | default | what it does |', '| --- | --- | --- |');
    for (const [name, variable] of entries) {
      if (variable.group !== group) continue;
      const label = `\`${name}\`${variable.secret ? ' **secret**' : ''}`;
      lines.push(`| ${label} | ${cell(defaultOf(variable))} | ${cell(variable.description)} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}
