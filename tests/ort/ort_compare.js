// Feeds the same seeded inputs to models A and B in ONNX Runtime and compares every output
// (by name when both have the same output names, else by position). Prints one line per output
// and the worst difference; exit 0 all within atol + rtol*|b|, 1 not, 2 bad input.
//   tests/ort/ort_node.sh ort_compare.js A B [--dims batch=3,...] [--rtol R] [--atol A] [--seed N] [--int-range LO,HI]
'use strict';
const ort = require('onnxruntime-node');
const c = require('./ort_common');

async function compareModels(pathA, pathB, { dims = {}, seed = 1, rtol = 1e-4, atol = 1e-5, intRanges = {}, defaultRange, log = console.log } = {}) {
  const [a, b] = [await c.createSession(ort, pathA), await c.createSession(ort, pathB)];
  const feedsA = c.makeInputs(ort, a, { dims, seed, intRanges, defaultRange });
  if (a.inputNames.length !== b.inputNames.length) throw new c.UsageError(`${pathA} has ${a.inputNames.length} inputs, ${pathB} has ${b.inputNames.length}`);
  const feedsB = {};
  a.inputNames.forEach((name, i) => { feedsB[b.inputNames.includes(name) ? name : b.inputNames[i]] = feedsA[name]; });
  const [outA, outB] = [await a.run(feedsA), await b.run(feedsB)];
  const sameNames = a.outputNames.length === b.outputNames.length && a.outputNames.every((n) => b.outputNames.includes(n));
  if (a.outputNames.length !== b.outputNames.length) throw new c.UsageError(`${pathA} has ${a.outputNames.length} outputs, ${pathB} has ${b.outputNames.length}`);
  let ok = true;
  let worst = { excess: -Infinity, text: 'no differences' };
  a.outputNames.forEach((name, i) => {
    const other = sameNames ? name : b.outputNames[i];
    const r = c.compareOutput(outA[name], outB[other], rtol, atol);
    log(`${r.ok ? 'ok  ' : 'DIFF'} ${name}${other !== name ? ` / ${other}` : ''} [${outA[name].dims}]: ${r.where}`);
    if (r.excess > worst.excess) worst = { excess: r.excess, text: `${name}: ${r.where}` };
    ok = ok && r.ok;
  });
  log(`worst: ${worst.text} (rtol ${rtol}, atol ${atol})`);
  return ok;
}

if (require.main === module) {
  c.run(async () => {
    const { positional, options } = c.parseArgs(process.argv.slice(2));
    if (positional.length !== 2) throw new c.UsageError('usage: ort_compare.sh A B [--dims N=V,...] [--rtol R] [--atol A] [--seed N] [--int-range LO,HI]');
    const ok = await compareModels(positional[0], positional[1], c.compareOptions(options));
    return ok ? 0 : 1;
  });
}

module.exports = { compareModels };
