#!/usr/bin/env node
// tools/lint/conflict-markers.js: refuses merge-conflict markers in every file git tracks (and in new
// files not yet added, unless ignored), whatever the language: Markdown included, which Prettier
// does not parse (docs/design.md, "CI"). Run by `npm run lint`.
//
// A marker is a line that starts with `<<<<<<<` or `>>>>>>>` (git follows them with a space and the
// side's name), or `|||||||` (the merge base, with merge.conflictStyle=diff3) and a line that is
// exactly `=======` between an opening and a closing marker (alone, `=======` underlines a Markdown
// heading).
//
//   node tools/lint/conflict-markers.js [dir]   # the checkout this file is in, or the git work tree at dir
'use strict';
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const OPENING = /^<{7}(?: |$)/;
const CLOSING = /^>{7}(?: |$)/;
const BASE = /^\|{7}(?: |$)/;
const SEPARATOR = /^={7}$/;

/** The marker lines of a text: [{ line (1-based), text }], in order. */
function findConflictMarkers(text) {
  const markers = [];
  let open = false;
  text.split('\n').forEach((raw, index) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    let marker = false;
    if (OPENING.test(line)) {
      marker = true;
      open = true;
    } else if (CLOSING.test(line)) {
      marker = true;
      open = false;
    } else if (open && (BASE.test(line) || SEPARATOR.test(line))) {
      marker = true;
    }
    if (marker) markers.push({ line: index + 1, text: line });
  });
  return markers;
}

/** The checkout's files: tracked, plus untracked ones git does not ignore (about to be added). */
function listedFiles(root) {
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 28 });
  return [...new Set(out.split('\0').filter(Boolean))];
}

/** Every marker in the files under root: [{ file, line, text }]. Binary files (a NUL byte) and deleted ones are skipped. */
function scan(root, files = listedFiles(root)) {
  const found = [];
  for (const file of files) {
    let content;
    try {
      content = fs.readFileSync(path.join(root, file));
    } catch (error) {
      if (error.code === 'ENOENT' || error.code === 'EISDIR') continue; // deleted in the work tree; a submodule
      throw error;
    }
    if (content.includes(0)) continue;
    for (const marker of findConflictMarkers(content.toString('utf8'))) found.push({ file, ...marker });
  }
  return found;
}

if (require.main === module) {
  const root = path.resolve(process.argv[2] ?? path.join(__dirname, '..', '..'));
  const found = scan(root);
  for (const { file, line, text } of found) console.error(`${file}:${line}: merge-conflict marker: ${text.slice(0, 80)}`);
  if (found.length) {
    console.error(`${found.length} merge-conflict marker${found.length === 1 ? '' : 's'}: resolve the merge (keep what each side meant), then remove them.`);
    process.exit(1);
  }
}

module.exports = { findConflictMarkers, scan };
