// PassLens on the committed opset-17 exports (tests/models/manifest.json), judged by ONNX Runtime:
//   ort_node.sh check_optimized.js interpreter DIR CLI   passlens-cli run gives ONNX Runtime's
//                                                        outputs at every manifest binding, on
//                                                        the exports and their opset 18-23 rewrites
//   ort_node.sh check_optimized.js levels DIR CLI WORK   optimize at basic, extended and all:
//       outputs equal the export's in ONNX Runtime at every binding (Faster R-CNN included);
//       a static export after basic has no Shape/Size/ConstantOfShape/Range and at most ONNX
//       Runtime's basic node count; a dynamic export after basic stays within the recorded
//       factor of its static twin (issue #27's targets where they hold, today's figure elsewhere)
// Exit 0 pass, 1 a check failed, 2 bad usage, 3 (from ort_node.sh) no onnxruntime-node.
'use strict';
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const ort = require('onnxruntime-node');
const wire = require('./onnx_wire');
const { compareModels } = require('../ort/ort_compare');
const { compareWithInterpreter } = require('../ort/ort_vs_interpreter');
const { loadManifest, intRanges } = require('./check_fixtures');

const SHAPE_OPS = ['Shape', 'Size', 'ConstantOfShape', 'Range'];
// Nodes after basic, dynamic export / static export. Issue #27 asks for 1.1 (batch/sequence
// dims) and 1.3 (image dims); a model listed above its target is a regression guard at today's
// figure until the remaining shape work lands. Faster R-CNN's static export folds its float32
// resize arithmetic (below ONNX Runtime's basic); on symbols that arithmetic stays.
const DYNAMIC_FACTOR = {
  vit_tiny: 1.1, transformer_encoder: 1.1, convnext_tiny: 1.3, resnet_tiny: 1.3, mobilenetv3_small: 1.3,
  efficientnet_b0_tiny: 1.3, gpt_tiny: 1.1, deeplabv3_tiny: 1.3, swin_tiny: 1.2, fasterrcnn_tiny: 1.3,
  lstm_tiny: 1.1,
  // Top-level nodes: the static export is Loop + Gemm; the dynamic one also needs its trip count
  // (Shape → Gather of seq) and its zero state of [batch, 16] (Shape slice → Concat →
  // ConstantOfShape), 7 nodes; no standard-ONNX form needs fewer than these 5 (ONNX Runtime's
  // basic level leaves 8 / 2). With the body's 13 nodes counted it is 20 / 15.
  scripted_rnn_loop: 3.5,
};

// Fixtures the interpreter refuses on purpose, with the reason (docs/interpreter.md).
const INTERPRETER_GAPS = { 'float8_int4_ir10.onnx': 'no float8/int4 Cast kernels yet' };

function originals(dir) {
  return loadManifest(dir).filter((f) => !f.rewrite_of && f.opset === 17);
}

function optimize(cli, model, level, out) {
  const r = spawnSync(cli, ['optimize', model, '-o', out, '--level', level], { encoding: 'utf8' });
  return r.status === 0 ? null : `optimize --level ${level} exit ${r.status}: ${(r.stderr || '').trim().split('\n').pop()}`;
}

async function ortBasicNodes(model, out) {
  await ort.InferenceSession.create(model, { graphOptimizationLevel: 'basic', optimizedModelFilePath: out });
  return wire.graphStats(fs.readFileSync(out)).nodeCount;
}

// Every export and every opset 18-23 rewrite of one (at its original's bindings).
function allWithBindings(dir) {
  const all = loadManifest(dir);
  return all.filter((f) => f.bindings || f.rewrite_of).map((f) => {
    const original = f.rewrite_of ? all.find((o) => o.file === f.rewrite_of) : f;
    return { ...f, inputs: original.inputs, bindings: f.bindings || original.bindings };
  }).filter((f) => f.bindings);
}

async function checkInterpreter(dir, cli) {
  const problems = [];
  for (const f of allWithBindings(dir)) {
    for (const b of f.bindings) {
      const lines = [];
      const ok = await compareWithInterpreter(path.join(dir, f.file), cli, {
        dims: b.dims, seed: b.seed, intRanges: intRanges(f), rtol: 1e-3, atol: 1e-4, log: (l) => lines.push(l),
      });
      const gap = INTERPRETER_GAPS[f.file];
      if (gap) {  // a refusal that names the problem is right; any other outcome is news
        const refused = !ok && lines.some((l) => l.includes('not supported'));
        console.log(`${refused ? 'ok  ' : 'FAIL'} ${f.file}: refused by name (${gap})`);
        if (!refused) problems.push(`${f.file}: expected a clear refusal (${gap}), got:\n  ${lines.join('\n  ')}`);
        continue;
      }
      console.log(`${ok ? 'ok  ' : 'FAIL'} ${f.file} ${JSON.stringify(b.dims)}: ${lines[lines.length - 1]}`);
      if (!ok) problems.push(`${f.file} ${JSON.stringify(b.dims)}: interpreter differs from ONNX Runtime:\n  ${lines.join('\n  ')}`);
    }
  }
  return problems;
}

async function checkLevels(dir, cli, work) {
  fs.mkdirSync(work, { recursive: true });
  const problems = [];
  const basicNodes = {};
  const fixtures = originals(dir);
  for (const f of fixtures) {
    const model = path.join(dir, f.file);
    const stem = f.file.replace(/\.onnx$/, '');
    for (const level of ['basic', 'extended', 'all']) {
      const out = path.join(work, `${stem}.${level}.onnx`);
      const failed = optimize(cli, model, level, out);
      if (failed) { problems.push(`${f.file}: ${failed}`); continue; }
      for (const b of f.bindings) {
        const lines = [];
        const ok = await compareModels(model, out, {
          dims: b.dims, seed: b.seed, intRanges: intRanges(f), rtol: 1e-3, atol: 1e-4, log: (l) => lines.push(l),
        });
        if (!ok) problems.push(`${f.file} ${level} ${JSON.stringify(b.dims)}: outputs differ from the export's:\n  ${lines.join('\n  ')}`);
      }
      if (level !== 'basic') continue;
      const stats = wire.graphStats(fs.readFileSync(out));
      basicNodes[stem] = stats.nodeCount;
      let line = `${f.file}: basic ${f.node_count} -> ${stats.nodeCount}`;
      if (f.shapes === 'static') {
        const left = SHAPE_OPS.filter((op) => stats.opHistogram[op]).map((op) => `${stats.opHistogram[op]} ${op}`);
        const ortNodes = await ortBasicNodes(model, path.join(work, `${stem}.ort-basic.onnx`));
        line += ` (ONNX Runtime basic ${ortNodes})`;
        if (f.model !== 'fasterrcnn_tiny' && f.model !== 'scripted_rnn_loop') {  // data-dependent sizes keep shape ops
          if (left.length) problems.push(`${f.file}: basic leaves ${left.join(', ')}`);
          if (stats.nodeCount > ortNodes) problems.push(`${f.file}: basic leaves ${stats.nodeCount} nodes, ONNX Runtime's basic ${ortNodes}`);
        }
      }
      console.log(line);
    }
  }
  for (const f of fixtures.filter((x) => x.shapes === 'dynamic')) {
    const dyn = basicNodes[`${f.model}_dynamic`], stat = basicNodes[`${f.model}_static`];
    if (dyn === undefined || stat === undefined) continue;
    const limit = DYNAMIC_FACTOR[f.model];
    const factor = dyn / stat;
    console.log(`${f.model}: after basic dynamic ${dyn} / static ${stat} = ${factor.toFixed(2)} (limit ${limit})`);
    if (limit === undefined) problems.push(`${f.model}: no dynamic/static limit recorded in check_optimized.js`);
    else if (factor > limit) problems.push(`${f.model}: dynamic export after basic has ${factor.toFixed(2)}x the static export's nodes, over ${limit}`);
  }
  return problems;
}

async function main() {
  const [mode, dir, cli, work] = process.argv.slice(2);
  if (!['interpreter', 'levels'].includes(mode) || !dir || !cli || (mode === 'levels' && !work)) {
    console.error('usage: check_optimized.js interpreter DIR CLI | levels DIR CLI WORK');
    return 2;
  }
  const problems = mode === 'interpreter' ? await checkInterpreter(dir, cli) : await checkLevels(dir, cli, work);
  for (const p of problems) console.error(`check_optimized ${mode}: ${p}`);
  console.log(problems.length ? `${mode}: ${problems.length} problem(s)` : `${mode}: all good`);
  return problems.length ? 1 : 0;
}

main().then((code) => process.exit(code)).catch((e) => {
  console.error(`check_optimized: ${e.stack || e.message}`);
  process.exit(1);
});
