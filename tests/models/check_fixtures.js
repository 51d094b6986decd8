// Checks the committed fixtures against tests/models/manifest.json (README.md says what each is).
//   node check_fixtures.js manifest DIR          files exist, size/sha256/node counts/op histograms
//                                                match, no unlisted .onnx, size budget (no ORT)
//   ort_node.sh check_fixtures.js rewrites DIR   each opset 18..23 rewrite gives its opset-17
//                                                original's outputs in ONNX Runtime
//   ort_node.sh check_fixtures.js bindings DIR   each export runs in ONNX Runtime at each binding
//                                                and matches torch's output dims and sums
// Exit 0 pass, 1 a check failed, 2 bad usage, 3 (from ort_node.sh) no onnxruntime-node.
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const wire = require('./onnx_wire');

const MAX_FILE_BYTES = 1.5 * 1024 * 1024;
const MAX_TOTAL_BYTES = 8 * 1024 * 1024;

function loadManifest(dir) {
  return JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')).fixtures;
}

function sameHistogram(a, b) {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((k) => a[k] === b[k]);
}

function checkManifest(dir, fixtures) {
  const problems = [];
  let total = 0;
  for (const f of fixtures) {
    const file = path.join(dir, f.file);
    if (!fs.existsSync(file)) { problems.push(`${f.file}: missing`); continue; }
    const data = fs.readFileSync(file);
    total += data.length;
    if (data.length !== f.size) problems.push(`${f.file}: ${data.length} bytes, manifest says ${f.size}`);
    if (data.length > MAX_FILE_BYTES) problems.push(`${f.file}: ${data.length} bytes, over the ${MAX_FILE_BYTES}-byte limit`);
    const sha = crypto.createHash('sha256').update(data).digest('hex');
    if (sha !== f.sha256) problems.push(`${f.file}: sha256 ${sha}, manifest says ${f.sha256}`);
    let stats;
    try { stats = wire.graphStats(data); } catch (e) { problems.push(`${f.file}: not a readable ModelProto: ${e.message}`); continue; }
    if (stats.nodeCount !== f.node_count) problems.push(`${f.file}: ${stats.nodeCount} nodes, manifest says ${f.node_count}`);
    if (stats.subgraphNodeCount !== f.subgraph_node_count) problems.push(`${f.file}: ${stats.subgraphNodeCount} subgraph nodes, manifest says ${f.subgraph_node_count}`);
    if (!sameHistogram(stats.opHistogram, f.op_histogram)) problems.push(`${f.file}: op histogram differs from the manifest's`);
    if (f.rewrite_of && !fixtures.some((o) => o.file === f.rewrite_of)) problems.push(`${f.file}: rewrite_of ${f.rewrite_of} is not in the manifest`);
  }
  const listed = new Set(fixtures.map((f) => f.file));
  for (const name of fs.readdirSync(dir)) if (name.endsWith('.onnx') && !listed.has(name)) problems.push(`${name}: not in the manifest`);
  if (total > MAX_TOTAL_BYTES) problems.push(`fixtures total ${total} bytes, over the ${MAX_TOTAL_BYTES}-byte budget`);
  console.log(`${fixtures.length} fixtures, ${total} bytes`);
  return problems;
}

function intRanges(fixture) {
  const ranges = {};
  for (const input of fixture.inputs) if (input.range) ranges[input.name] = input.range;
  return ranges;
}

async function checkRewrites(dir, fixtures) {
  const { compareModels } = require('../ort/ort_compare');
  const problems = [];
  const rewrites = fixtures.filter((f) => f.rewrite_of);
  if (rewrites.length === 0) problems.push('no rewrites in the manifest');
  for (const f of rewrites) {
    const original = fixtures.find((o) => o.file === f.rewrite_of);
    for (const binding of original.bindings) {
      const lines = [];
      const ok = await compareModels(path.join(dir, f.rewrite_of), path.join(dir, f.file), {
        dims: binding.dims, seed: binding.seed, intRanges: intRanges(original), rtol: 1e-4, atol: 1e-5,
        log: (line) => lines.push(line),
      });
      console.log(`${ok ? 'ok  ' : 'FAIL'} ${f.file} vs ${f.rewrite_of} ${JSON.stringify(binding.dims)}: ${lines[lines.length - 1]}`);
      if (!ok) problems.push(`${f.file}: outputs differ from ${f.rewrite_of}:\n  ${lines.join('\n  ')}`);
    }
  }
  return problems;
}

// torch's sums come from float64 sums of the same inputs' outputs; ORT's float32 kernels
// reassociate, so sums agree to a small fraction of the sum of magnitudes.
function sumsAgree(got, want) {
  const tolerance = 2e-4 * want.abs_sum + 1e-6;
  return Math.abs(got.sum - want.sum) <= tolerance && Math.abs(got.absSum - want.abs_sum) <= tolerance;
}

function torchCheckMissing(f) {
  return f.bindings.some((b) => b.torch_outputs) && !['sums', 'dims'].includes(f.torch_check);
}

async function checkBindings(dir, fixtures) {
  const ort = require('onnxruntime-node');
  const c = require('../ort/ort_common');
  const problems = [];
  for (const f of fixtures) {
    if (torchCheckMissing(f)) { problems.push(`${f.file}: torch_check must be 'sums' or 'dims'`); continue; }
    let session;
    try { session = await c.createSession(ort, path.join(dir, f.file)); } catch (e) { problems.push(e.message); continue; }
    for (const binding of f.bindings) {
      const where = `${f.file} ${JSON.stringify(binding.dims)}`;
      let outputs;
      try {
        outputs = await session.run(c.makeInputs(ort, session, { dims: binding.dims, seed: binding.seed, intRanges: intRanges(f) }));
      } catch (e) { problems.push(`${where}: does not run: ${e.message}`); continue; }
      const bad = [];
      for (const name of session.outputNames) {
        const t = outputs[name];
        const want = binding.torch_outputs ? binding.torch_outputs[name] : null;
        const expectedDims = want ? want.dims : f.outputs.find((o) => o.name === name).dims;
        if (expectedDims.length !== t.dims.length || expectedDims.some((d, i) => d !== t.dims[i])) {
          bad.push(`${name} dims [${t.dims}], expected [${expectedDims}]`);
        } else if (f.expected_outputs && f.expected_outputs[name]
                   && Array.from(t.data, Number).join() !== f.expected_outputs[name].join()) {
          bad.push(`${name} is [${Array.from(t.data)}], expected [${f.expected_outputs[name]}]`);
        } else if (want && f.torch_check === 'sums' && !sumsAgree(c.sums(t), want)) {
          const s = c.sums(t);
          bad.push(`${name} sum ${s.sum} (|x| ${s.absSum}), torch ${want.sum} (|x| ${want.abs_sum})`);
        }
      }
      const against = !binding.torch_outputs ? '' : f.torch_check === 'sums' ? ' (against torch)' : ' (against torch, dims only)';
      console.log(`${bad.length ? 'FAIL' : 'ok  '} ${where}${against}`);
      if (bad.length) problems.push(`${where}: ${bad.join('; ')}`);
    }
  }
  return problems;
}

async function main() {
  const [mode, dir] = process.argv.slice(2);
  const checks = { manifest: checkManifest, rewrites: checkRewrites, bindings: checkBindings };
  if (!checks[mode] || !dir) {
    console.error('usage: check_fixtures.js manifest|rewrites|bindings DIR');
    return 2;
  }
  const problems = await checks[mode](dir, loadManifest(dir));
  for (const p of problems) console.error(`check_fixtures ${mode}: ${p}`);
  console.log(problems.length ? `${mode}: ${problems.length} problem(s)` : `${mode}: all good`);
  return problems.length ? 1 : 0;
}

if (require.main === module) {
  main().then((code) => process.exit(code)).catch((e) => {
    console.error(`check_fixtures: ${e.stack || e.message}`);
    process.exit(1);
  });
}

module.exports = { loadManifest, intRanges };
