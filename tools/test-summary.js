// Prints per-suite counts from jest's --json files and one closing "N passed, N failed" line.
const fs = require('fs');
const path = require('path');
const dir = process.argv[2];
const tiers = process.argv.length > 3 ? process.argv.slice(3) : ['unit', 'integration', 'e2e', 'resilience'];
/** Every failed test with the first lines of its error, printed last so a log's tail names them. */
const failures = [];
const firstLines = (message) =>
  message
    .replace(/\u001b\[[0-9;]*m/g, '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('at '))
    .slice(0, 3)
    .join(' / ')
    .slice(0, 300);
let passed = 0,
  failed = 0,
  skipped = 0;
console.log('\n=== test summary');
for (const tier of tiers) {
  const file = path.join(dir, `${tier}.json`);
  if (!fs.existsSync(file)) {
    console.log(`${tier.padEnd(12)} did not run`);
    failed++;
    continue;
  }
  const r = JSON.parse(fs.readFileSync(file, 'utf8'));
  passed += r.numPassedTests;
  failed += r.numFailedTests + r.numRuntimeErrorTestSuites;
  skipped += r.numPendingTests;
  console.log(
    `${tier.padEnd(12)} ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped in ${r.numTotalTestSuites} suites${r.numRuntimeErrorTestSuites ? ` (${r.numRuntimeErrorTestSuites} suites failed to run)` : ''}`,
  );
  for (const suite of r.testResults) {
    const name = path.relative(process.cwd(), suite.name);
    const ok = suite.assertionResults.filter((a) => a.status === 'passed').length;
    const bad = suite.assertionResults.filter((a) => a.status === 'failed').length;
    console.log(`    ${bad || suite.status === 'failed' ? 'FAIL' : 'ok  '} ${name}: ${ok} passed${bad ? `, ${bad} failed` : ''}`);
    for (const a of suite.assertionResults.filter((a) => a.status === 'failed'))
      failures.push(`${tier} ${name} › ${a.fullName}\n      ${firstLines(a.failureMessages.join('\n'))}`);
    if (suite.status === 'failed' && !bad && suite.message) failures.push(`${tier} ${name} (the suite did not run)\n      ${firstLines(suite.message)}`);
  }
}
// The chaos run (tools/test-all.sh keeps its log): a failed verdict's broken invariants and their first violations.
const chaosLog = path.join(dir, 'chaos.log');
if (fs.existsSync(chaosLog)) {
  const lines = fs.readFileSync(chaosLog, 'utf8').split('\n');
  const verdict = lines.find((line) => line.startsWith('verdict: '));
  if (verdict !== 'verdict: PASS') {
    const broken = lines.filter((line) => /^\| .* \| FAIL \| \d+ \|$/.test(line)).map((line) => line.split(' | ')[0].slice(2).split(':')[0]);
    // The violations follow their invariant's "name (first N of M):" line; "what the faults saw" is no violation.
    const examples = lines
      .filter(
        (line, i) =>
          line.startsWith('  - ') &&
          lines
            .slice(0, i)
            .reverse()
            .find((l) => !l.startsWith('  - '))
            ?.match(/\(first \d+ of \d+\):$/),
      )
      .slice(0, 5);
    const what = verdict ? `broke ${broken.join(', ') || 'an invariant'}` : `ended without a verdict: ${lines.filter(Boolean).slice(-3).join(' / ')}`;
    failed++;
    failures.push(`chaos (replay: npm run chaos -- --short --seed 1) ${what}${examples.length ? `\n${examples.map((e) => `    ${e}`).join('\n')}` : ''}`);
  }
}
const steps = path.join(dir, 'steps.txt');
if (fs.existsSync(steps)) process.stdout.write(fs.readFileSync(steps, 'utf8'));
if (failures.length) console.log(`--- failed tests\n${failures.map((f) => `  ✕ ${f}`).join('\n')}`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 ? 1 : 0);
