// Runs one model in ONNX Runtime and in PassLens's interpreter (passlens-cli run --input-dir) on
// the same seeded inputs and compares every output by position. One line per output and the
// worst difference; exit 0 all within atol + rtol*|b| (b = ONNX Runtime), 1 not, 2 bad input.
//   tests/ort/ort_node.sh ort_vs_interpreter.js MODEL CLI [--dims batch=3,...] [--rtol R] [--atol A]
//                         [--seed N] [--int-range LO,HI]
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const ort = require('onnxruntime-node');
const c = require('./ort_common');
const pb = require('./ort_tensor_pb');

async function compareWithInterpreter(modelPath, cliPath, { dims = {}, seed = 1, rtol = 1e-4, atol = 1e-5, intRanges = {}, defaultRange, log = console.log } = {}) {
  const session = await c.createSession(ort, modelPath);
  const feeds = c.makeInputs(ort, session, { dims, seed, intRanges, defaultRange });
  const expected = await session.run(feeds);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'passlens-interp-'));
  try {
    session.inputNames.forEach((name, i) => fs.writeFileSync(path.join(work, `input_${i}.pb`), pb.encodeTensor(name, feeds[name])));
    const args = ['run', modelPath, '--input-dir', work, '--out-dir', path.join(work, 'out')];
    for (const [name, value] of Object.entries(dims)) args.push('--dim', `${name}=${value}`);
    const r = spawnSync(cliPath, args, { encoding: 'utf8' });
    if (r.error) throw new c.UsageError(`${cliPath}: ${r.error.message}`);
    if (r.status !== 0) {
      log(`FAIL interpreter exit ${r.status}: ${(r.stderr || '').trim().split('\n').pop()}`);
      return false;
    }
    let ok = true;
    let worst = { excess: -Infinity, text: 'no differences' };
    session.outputNames.forEach((name, i) => {
      const file = path.join(work, 'out', `output_${i}.pb`);
      if (!fs.existsSync(file)) { ok = false; log(`DIFF ${name}: the interpreter wrote no output ${i}`); return; }
      const got = pb.decodeTensor(fs.readFileSync(file));
      const want = expected[name];
      const r = c.compareOutput(got, { type: want.type, dims: Array.from(want.dims), data: want.data }, rtol, atol);
      log(`${r.ok ? 'ok  ' : 'DIFF'} ${name} [${want.dims}]: ${r.where}`);
      if (r.excess > worst.excess) worst = { excess: r.excess, text: `${name}: ${r.where}` };
      ok = ok && r.ok;
    });
    log(`worst: ${worst.text} (interpreter vs ONNX Runtime, rtol ${rtol}, atol ${atol})`);
    return ok;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (require.main === module) {
  c.run(async () => {
    const { positional, options } = c.parseArgs(process.argv.slice(2));
    if (positional.length !== 2) throw new c.UsageError('usage: ort_vs_interpreter.js MODEL CLI [--dims N=V,...] [--rtol R] [--atol A] [--seed N] [--int-range LO,HI]');
    const ok = await compareWithInterpreter(positional[0], positional[1], c.compareOptions(options));
    return ok ? 0 : 1;
  });
}

module.exports = { compareWithInterpreter };
