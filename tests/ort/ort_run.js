// Runs a model in ONNX Runtime and prints each output's name, type and dims; --out writes the
// outputs as a JSON tensor file (format in ort_common.js). Inputs come from --inputs FILE.json,
// or are generated from --seed and --dims (--save-inputs writes those).
//   tests/ort/ort_node.sh ort_run.js MODEL [--dims batch=3,...] [--seed N] [--int-range LO,HI]
//       [--inputs IN.json] [--save-inputs IN.json] [--out OUT.json]
'use strict';
const ort = require('onnxruntime-node');
const c = require('./ort_common');

c.run(async () => {
  const { positional, options } = c.parseArgs(process.argv.slice(2));
  if (positional.length !== 1) throw new c.UsageError('usage: ort_run.js MODEL [--dims N=V,...] [--seed N] [--int-range LO,HI] [--inputs F] [--save-inputs F] [--out F]');
  const session = await c.createSession(ort, positional[0]);
  const feeds = options.inputs ? c.readTensors(ort, options.inputs) : c.makeInputs(ort, session, {
    dims: c.parseDims(options.dims), seed: c.numberOption(options, 'seed', 1),
    defaultRange: options['int-range'] ? c.parseRange(options['int-range']) : undefined,
  });
  if (options['save-inputs']) c.writeTensors(options['save-inputs'], feeds);
  const outputs = await session.run(feeds);
  for (const name of session.outputNames) console.log(`${name}\t${outputs[name].type}\t[${outputs[name].dims}]`);
  if (options.out) c.writeTensors(options.out, outputs);
  return 0;
});
