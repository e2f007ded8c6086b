import { execFileSync, spawnSync } from 'child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- a plain Node script (lint runs it without a compiler)
const { findConflictMarkers } = require('./conflict-markers') as {
  findConflictMarkers: (text: string) => Array<{ line: number; text: string }>;
};

const SCRIPT = join(__dirname, 'conflict-markers.js');
// Built, not written out: this file must pass the check itself.
const OURS = '<'.repeat(7);
const THEIRS = '>'.repeat(7);
const BASE = '|'.repeat(7);
const SEPARATOR = '='.repeat(7);

describe('conflict markers', () => {
  it('finds the three markers of a conflict, with their lines, in any text', () => {
    const text = ['# Title', `${OURS} HEAD`, 'ours', SEPARATOR, 'theirs', `${THEIRS} feature`, 'after'].join('\n');
    expect(findConflictMarkers(text)).toEqual([
      { line: 2, text: `${OURS} HEAD` },
      { line: 4, text: SEPARATOR },
      { line: 6, text: `${THEIRS} feature` },
    ]);
  });

  it('finds the merge base of a diff3 conflict, markers with Windows line ends, and an opening or closing marker alone', () => {
    const diff3 = [`${OURS} ours`, 'a', `${BASE} merged common ancestors`, 'o', SEPARATOR, 'b', `${THEIRS} theirs`].join('\r\n');
    expect(findConflictMarkers(diff3).map((m) => m.line)).toEqual([1, 3, 5, 7]);
    expect(findConflictMarkers(diff3)[0].text).toBe(`${OURS} ours`);
    expect(findConflictMarkers(`text\n${OURS}\nmore`)).toEqual([{ line: 2, text: OURS }]);
    expect(findConflictMarkers(`text\n${THEIRS} main\n`)).toEqual([{ line: 2, text: `${THEIRS} main` }]);
  });

  it('leaves alone what only looks like one: a Markdown heading underline, longer runs, markers inside a line', () => {
    const markdown = ['Title', SEPARATOR, '', `${OURS}< not a marker`, `x ${OURS} y`, `${SEPARATOR}=`, `  ${THEIRS} indented`, BASE].join('\n');
    expect(findConflictMarkers(markdown)).toEqual([]);
  });

  it('fails the lint on a real merge conflict in a Markdown file of a git work tree, and passes once it is resolved', () => {
    const repo = mkdtempSync(join(tmpdir(), 'conflict-markers-'));
    try {
      const git = (...args: string[]) =>
        execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.org', '-c', 'init.defaultBranch=main', ...args], { cwd: repo, stdio: 'pipe' });
      git('init', '-q');
      writeFileSync(join(repo, 'README.md'), 'Intro\n=====\n\nThe API is on :8080.\n');
      writeFileSync(join(repo, '.gitignore'), 'ignored.md\n');
      writeFileSync(join(repo, 'image.bin'), Buffer.concat([Buffer.from(`${OURS} binary\n`), Buffer.from([0, 1, 2])]));
      git('add', '.');
      git('commit', '-qm', 'base');
      git('checkout', '-qb', 'other');
      writeFileSync(join(repo, 'README.md'), 'Intro\n=====\n\nThe API is on :8081.\n');
      git('commit', '-qam', 'other');
      git('checkout', '-q', 'main');
      writeFileSync(join(repo, 'README.md'), 'Intro\n=====\n\nThe API is on :9090.\n');
      git('commit', '-qam', 'main');
      expect(() => git('merge', '-q', 'other')).toThrow(); // the conflict
      git('add', 'README.md'); // committed with its markers, as merge 77a2982 did
      git('commit', '-qm', 'merge');
      writeFileSync(join(repo, 'ignored.md'), `${OURS} HEAD\n`);

      const failing = spawnSync(process.execPath, [SCRIPT, repo], { encoding: 'utf8' });
      expect(failing.status).toBe(1);
      expect(failing.stderr).toContain(`README.md:4: merge-conflict marker: ${OURS} HEAD`);
      expect(failing.stderr).toContain(`README.md:6: merge-conflict marker: ${SEPARATOR}`);
      expect(failing.stderr).toContain(`README.md:8: merge-conflict marker: ${THEIRS} other`);
      expect(failing.stderr).toContain('3 merge-conflict markers');
      expect(failing.stderr).not.toMatch(/image\.bin|ignored\.md/);

      writeFileSync(join(repo, 'README.md'), 'Intro\n=====\n\nThe API is on :8081.\n');
      writeFileSync(join(repo, 'new.md'), `Not added yet\n${THEIRS} theirs\n`);
      const untracked = spawnSync(process.execPath, [SCRIPT, repo], { encoding: 'utf8' });
      expect(untracked.stderr).toContain(`new.md:2: merge-conflict marker: ${THEIRS} theirs`);

      rmSync(join(repo, 'new.md'));
      const passing = spawnSync(process.execPath, [SCRIPT, repo], { encoding: 'utf8' });
      expect([passing.status, passing.stderr]).toEqual([0, '']);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});
