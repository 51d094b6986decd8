// Training graphs of the committed exports, run in ONNX Runtime and judged by PyTorch autograd:
//   ort_node.sh check_grads.js DIR CLI WORK [FIXTURE,...]
// For every DIR/<fixture>.grads.json (written by gen_grads.py): `passlens-cli grad --loss mse` on
// the static export and its opset 18-23 rewrites, on the static export with `--recompute sqrt`
// and with a budget between the lowest arena recomputation reaches and the arena without it (asked
// of passlens-cli itself: a budget of 1 byte is refused with both figures), and on the dynamic export (batch left symbolic, image dims pinned) at the
// reference's batch sizes. Each training graph must load in ONNX Runtime (standard ONNX), and
// every <initializer>_grad it computes on gen_grads.py's closed-form inputs must equal PyTorch's
// within 1e-4 + 1e-3*max|g| (the sampled values and max|g|; sums within 1e-3 of the sum of |g|).
// Exit 0 pass, 1 a check failed, 2 bad usage, 3 (from ort_node.sh) no onnxruntime-node.
'use strict';
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const ort = require('onnxruntime-node');
const { UsageError, run } = require('../ort/ort_common');

// Flat row-major index i: floats sin(0.37 i + 1), token ids (7 i + 3) mod vocab; target 0.5 cos(0.29 i + 2).
function formulaInput(spec, dims) {
  const shape = spec.dims.map((d) => (typeof d === 'number' ? d : dims[d]));
  const count = shape.reduce((a, b) => a * b, 1);
  if (spec.dtype === 'float32') {
    const data = new Float32Array(count);
    for (let i = 0; i < count; i++) data[i] = Math.sin(0.37 * i + 1);
    return new ort.Tensor('float32', data, shape);
  }
  const vocab = Number(spec.formula.slice(spec.formula.lastIndexOf('%') + 1));
  const data = new BigInt64Array(count);
  for (let i = 0; i < count; i++) data[i] = BigInt((7 * i + 3) % vocab);
  return new ort.Tensor('int64', data, shape);
}

function formulaTarget(shape) {
  const count = shape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(count);
  for (let i = 0; i < count; i++) data[i] = 0.5 * Math.cos(0.29 * i + 2);
  return new ort.Tensor('float32', data, shape);
}

// The export's dims other than the batch (and a transformer's seq) are pinned on import.
function pins(runSpec) {
  return Object.entries(runSpec.dims).filter(([name]) => name !== 'batch' && name !== 'seq').map(([n, v]) => `${n}=${v}`);
}

function grad(cli, model, out, extra) {
  const r = spawnSync(cli, ['grad', model, '-o', out, '--loss', 'mse', ...extra], { encoding: 'utf8' });
  return r.status === 0 ? null : `grad exit ${r.status}: ${(r.stderr || '').trim().split('\n').pop().slice(0, 300)}`;
}

// [initializer of the training graph, PyTorch summary] for every gradient of a run. The reference
// keys them by the static export's names; the dynamic export renames some (dynamic_names) and
// stores some parameters another way (static_only, replaced by the run's dynamic_gradients).
function expectedGradients(ref, runSpec, dynamicExport) {
  const entries = Object.entries(runSpec.gradients);
  if (!dynamicExport) return entries;
  const staticOnly = new Set(ref.static_only || []);
  const renamed = ref.dynamic_names || {};
  return entries.filter(([name]) => !staticOnly.has(name)).map(([name, s]) => [renamed[name] || name, s])
    .concat(Object.entries(runSpec.dynamic_gradients || {}));
}

// Problems of one run: every gradient the reference lists, compared like the C++ test does.
function compareRun(ref, runSpec, outputs, dynamicExport) {
  const problems = [];
  let worst = 0;
  const loss = outputs.loss.data[0];
  if (!(Math.abs(loss - runSpec.loss) <= 1e-4 + 1e-4 * Math.abs(runSpec.loss))) problems.push(`loss ${loss}, PyTorch ${runSpec.loss}`);
  let count = 0;
  for (const [init, s] of expectedGradients(ref, runSpec, dynamicExport)) {
    const g = outputs[`${init}_grad`];
    if (!g) { problems.push(`no output ${init}_grad`); continue; }
    const p = g.data;
    const n = p.length;
    const tol = 1e-4 + 1e-3 * s.max_abs;
    const check = (got, want, what, tolerance) => {
      const d = Math.abs(got - want);
      worst = Math.max(worst, d / Math.max(s.max_abs, 1e-12));
      if (!(d <= tolerance)) problems.push(`${init}_grad ${what}: ours ${got}, PyTorch ${want}`);
    };
    let sum = 0;
    let sumSq = 0;
    let maxAbs = 0;
    for (let i = 0; i < n; i++) {
      sum += p[i];
      sumSq += p[i] * p[i];
      maxAbs = Math.max(maxAbs, Math.abs(p[i]));
    }
    s.first.forEach((v, i) => { if (i < n) check(p[i], v, `[${i}]`, tol); });
    (s.strided || []).forEach((v, k) => {
      const at = Math.floor((k * n) / s.strided.length);
      check(p[at], v, `[${at}]`, tol);
    });
    check(maxAbs, s.max_abs, 'max|g|', tol);
    check(sum, s.sum, 'sum', 1e-4 + 1e-3 * s.sum_abs);
    check(sumSq, s.sum_sq, 'sum of squares', 1e-8 + 2e-3 * s.sum_sq);
    count++;
  }
  return { problems, worst, count };
}

async function runTraining(file, ref, runSpec) {
  const session = await ort.InferenceSession.create(file);
  const feeds = {};
  for (const name of session.inputNames) {
    if (name === `${ref.output}_target`) { feeds[name] = formulaTarget(runSpec.output_dims); continue; }
    const spec = ref.inputs.find((s) => s.name === name);
    if (!spec) throw new Error(`no reference for input ${name}`);
    feeds[name] = formulaInput(spec, runSpec.dims);
  }
  return session.run(feeds);
}

// A budget halfway between the lowest arena recomputation reaches and the arena without it, from
// passlens-cli's refusal of an infeasible budget; null when recomputation cannot lower the arena.
function feasibleBudget(cli, model, work) {
  const r = spawnSync(cli, ['grad', model, '-o', path.join(work, 'budget_probe.onnx'), '--recompute', 'budget=1'], { encoding: 'utf8' });
  const m = /lowest planned arena is (\d+) bytes \(no recomputation: (\d+)\)/.exec(r.stderr || '');
  if (r.status !== 2 || !m) throw new Error(`${model}: expected budget=1 to be refused with the arena figures, got exit ${r.status}: ${r.stderr}`);
  const [lowest, none] = [Number(m[1]), Number(m[2])];
  return lowest < none ? Math.floor((lowest + none) / 2) : null;
}

// The training graphs of one fixture: [label, model file, grad options, runs, dynamic?].
function cases(dir, cli, work, fixture, ref) {
  const out = [];
  const statics = fs.readdirSync(dir).filter((f) => f.startsWith(`${fixture}_static`) && f.endsWith('.onnx')).sort();
  for (const f of statics) out.push([f, f, [], [ref.runs[0]], false]);
  out.push([`${fixture}_static.onnx --recompute sqrt`, `${fixture}_static.onnx`, ['--recompute', 'sqrt'], [ref.runs[0]], false]);
  const budget = feasibleBudget(cli, path.join(dir, `${fixture}_static.onnx`), work);
  if (budget !== null) {
    out.push([`${fixture}_static.onnx --recompute budget=${budget}`, `${fixture}_static.onnx`, ['--recompute', `budget=${budget}`], [ref.runs[0]], false]);
  } else {
    console.log(`     ${fixture}_static.onnx: recomputation cannot lower the arena, no budget case`);
  }
  const dynamicPins = pins(ref.runs[0]).flatMap((p) => ['--dim', p]);
  out.push([`${fixture}_dynamic.onnx`, `${fixture}_dynamic.onnx`, dynamicPins, ref.runs, true]);
  return out;
}

async function main() {
  const [dir, cli, work, only] = process.argv.slice(2);
  if (!dir || !cli || !work) throw new UsageError('usage: check_grads.js DIR CLI WORK [FIXTURE,...]');
  fs.mkdirSync(work, { recursive: true });
  const fixtures = only ? only.split(',') : fs.readdirSync(dir).filter((f) => f.endsWith('.grads.json')).map((f) => f.slice(0, -'.grads.json'.length)).sort();
  if (fixtures.length === 0) throw new UsageError(`${dir}: no *.grads.json`);
  const failures = [];
  for (const fixture of fixtures) {
    const ref = JSON.parse(fs.readFileSync(path.join(dir, `${fixture}.grads.json`), 'utf8'));
    for (const [label, file, extra, runs, dynamicExport] of cases(dir, cli, work, fixture, ref)) {
      const out = path.join(work, `${label.replace(/[^A-Za-z0-9_.=-]+/g, '_')}.train.onnx`);
      const refused = grad(cli, path.join(dir, file), out, extra);
      if (refused) { failures.push(`${label}: ${refused}`); console.log(`FAIL ${label}: ${refused}`); continue; }
      for (const runSpec of runs) {
        const at = `${label} ${JSON.stringify(runSpec.dims)}`;
        let outputs;
        try { outputs = await runTraining(out, ref, runSpec); } catch (e) {
          failures.push(`${at}: ONNX Runtime: ${e.message.split('\n')[0]}`);
          console.log(`FAIL ${at}: ONNX Runtime: ${e.message.split('\n')[0]}`);
          continue;
        }
        const { problems, worst, count } = compareRun(ref, runSpec, outputs, dynamicExport);
        if (count < 5) problems.push(`only ${count} gradients compared`);
        console.log(`${problems.length ? 'FAIL' : 'ok  '} ${at}: ${count} gradients, worst |Δ|/max|g| ${worst.toExponential(2)}`);
        for (const p of problems.slice(0, 5)) console.log(`     ${p}`);
        if (problems.length) failures.push(`${at}: ${problems.length} mismatches, first: ${problems[0]}`);
      }
    }
  }
  if (failures.length) {
    console.log(`\n${failures.length} failures:\n  ${failures.join('\n  ')}`);
    return 1;
  }
  return 0;
}

run(main);
