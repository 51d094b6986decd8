// Training graphs of the Faster R-CNN exports in ONNX Runtime: `passlens-cli grad --loss mse` on
// each fasterrcnn_*static*.onnx fixture (opset 17 and its rewrites) must load in ONNX Runtime
// (standard ONNX, RoiAlign's gradient included) and compute the same loss and gradients as the
// interpreter on the same seeded image. The target's first dim is the number of detections, a
// symbolic dim (Min(NonMaxSuppression_…, 10)): its value comes from running the export itself in
// ONNX Runtime on that image. The gradients' correctness against finite differences is
// AutodiffDetection in passlens_core_tests.
//   ort_node.sh check_detection_grads.js FIXTURES_DIR CLI WORK
// Exit 0 pass, 1 a check failed, 2 bad usage, 3 (from ort_node.sh) no onnxruntime-node.
'use strict';
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const ort = require('onnxruntime-node');
const c = require('../ort/ort_common');
const { compareWithInterpreter } = require('../ort/ort_vs_interpreter');

c.run(async () => {
  const { positional } = c.parseArgs(process.argv.slice(2));
  if (positional.length !== 3) throw new c.UsageError('usage: check_detection_grads.js FIXTURES_DIR CLI WORK');
  const [dir, cli, work] = positional;
  fs.mkdirSync(work, { recursive: true });
  const models = fs.readdirSync(dir).filter((f) => /^fasterrcnn_.*static.*\.onnx$/.test(f)).sort();
  if (models.length === 0) throw new c.UsageError(`no fasterrcnn_*static*.onnx in ${dir}`);
  let ok = true;
  for (const file of models) {
    const train = path.join(work, file.replace(/\.onnx$/, '.train.onnx'));
    const r = spawnSync(cli, ['grad', path.join(dir, file), '-o', train, '--loss', 'mse'], { encoding: 'utf8' });
    if (r.status !== 0) { console.log(`FAIL ${file}: grad exited ${r.status}: ${(r.stderr || '').trim()}`); ok = false; continue; }
    const forward = await c.createSession(ort, path.join(dir, file));
    const detections = (await forward.run(c.makeInputs(ort, forward))).boxes.dims[0];
    const trainSession = await c.createSession(ort, train);
    const target = trainSession.inputMetadata.find((m) => m.name === 'boxes_target');
    if (!target || typeof target.shape[0] !== 'string') { console.log(`FAIL ${file}: no symbolic boxes_target input`); ok = false; continue; }
    if (detections === 0) { console.log(`FAIL ${file}: no detections on the seeded image, nothing to check`); ok = false; continue; }
    console.log(`${file}: ${detections} detections, ${trainSession.outputNames.filter((n) => n.endsWith('_grad')).length} gradients`);
    // Gradients are sums over many products: compare at the tolerance of a float32 reduction.
    const same = await compareWithInterpreter(train, cli, { dims: { [target.shape[0]]: detections }, rtol: 1e-3, atol: 1e-4 });
    ok = ok && same;
  }
  return ok ? 0 : 1;
});
