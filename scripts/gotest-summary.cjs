// Reads `go test -json` events on stdin and prints what plain `go test`
// prints (one line per package, the output of every failing test), then the
// tests that were skipped and why. make test pipes into it; the exit status
// stays go test's own (set -o pipefail in the Makefile).
const readline = require('readline');
const out = new Map();      // "pkg test" → output lines
const skipped = [];         // {pkg, test, why}
let failed = false;
const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  let ev;
  try { ev = JSON.parse(line); } catch { console.log(line); return; } // build errors come as text
  const pkg = (ev.Package || '').replace('github.com/switchboard-dev/switchboard/', '');
  const key = pkg + ' ' + (ev.Test || '');
  switch (ev.Action) {
    case 'build-output':
      process.stdout.write(ev.Output || '');
      break;
    case 'build-fail':
      failed = true;
      break;
    case 'output':
      if (!out.has(key)) out.set(key, []);
      out.get(key).push(ev.Output);
      break;
    case 'skip':
      if (ev.Test) {
        const lines = (out.get(key) || []).map((l) => l.trim()).filter((l) => l && !l.startsWith('=== ') && !l.startsWith('--- SKIP'));
        skipped.push({ pkg, test: ev.Test, why: lines.join(' ') || 'no reason given' });
      } else {
        console.log(`?   \t${pkg}\t[no test files]`);
      }
      break;
    case 'fail':
      failed = true;
      if (ev.Test) {
        process.stdout.write((out.get(key) || []).join(''));
      } else {
        process.stdout.write((out.get(key) || []).filter((l) => !l.startsWith('=== ')).join(''));
        console.log(`FAIL\t${pkg}\t${ev.Elapsed ?? ''}s`);
      }
      break;
    case 'pass':
      if (!ev.Test) console.log(`ok  \t${pkg}\t${ev.Elapsed}s`);
      out.delete(key);
      break;
  }
});
rl.on('close', () => {
  console.log(`\nskipped tests: ${skipped.length}`);
  for (const s of skipped) console.log(`  ${s.pkg} ${s.test}: ${s.why}`);
  if (failed) console.log('\nsome tests FAILED (see above)');
});
