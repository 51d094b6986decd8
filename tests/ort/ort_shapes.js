// Prints the shape of every graph output of a model as ONNX Runtime computes it on seeded random
// inputs: list the values you want to see as graph outputs first (e.g. passlens-cli can write
// such a copy). One line per output: name, type, dims; --json prints one JSON object instead.
//   tests/ort/ort_node.sh ort_shapes.js MODEL [--dims batch=3,...] [--seed N] [--int-range LO,HI] [--json]
'use strict';
const ort = require('onnxruntime-node');
const c = require('./ort_common');

c.run(async () => {
  const { positional, options } = c.parseArgs(process.argv.slice(2), ['json']);
  if (positional.length !== 1) throw new c.UsageError('usage: ort_shapes.js MODEL [--dims N=V,...] [--seed N] [--int-range LO,HI] [--json]');
  const session = await c.createSession(ort, positional[0]);
  const feeds = c.makeInputs(ort, session, {
    dims: c.parseDims(options.dims), seed: c.numberOption(options, 'seed', 1),
    defaultRange: options['int-range'] ? c.parseRange(options['int-range']) : undefined,
  });
  const outputs = await session.run(feeds);
  const shapes = {};
  for (const name of session.outputNames) shapes[name] = { type: outputs[name].type, dims: Array.from(outputs[name].dims) };
  if (options.json) console.log(JSON.stringify(shapes, null, 1));
  else for (const [name, s] of Object.entries(shapes)) console.log(`${name}\t${s.type}\t[${s.dims}]`);
  return 0;
});
