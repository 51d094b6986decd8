// The `onnxruntime` profile against ONNX Runtime itself. For each committed static export and each
// extra model given (the downloaded OCR/VAD models, the generated BERT/GPT/ViT), at basic and
// extended: PassLens's `optimize --profile onnxruntime --level L` output and the model ONNX Runtime
// writes with optimizedModelFilePath at the same level must have the same op-type histogram
// (subgraphs included), and PassLens's output must compute the model's outputs in ONNX Runtime.
// Where the histograms cannot match yet, ort_profile_known.json pins the difference per model and
// level (op → PassLens count minus ONNX Runtime count): a difference outside the pinned one fails,
// a smaller one passes and asks for the table to shrink. Known causes: docs/onnxruntime-profile.md.
//   ort_node.sh ort_profile.js CLI FIXTURES_DIR WORK [EXTRA.onnx ...]
// PASSLENS_ORT_PROFILE_ONLY=vit,swin runs only the models whose file name contains one of the words.
'use strict';
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const ort = require('onnxruntime-node');
const wire = require('../models/onnx_wire');
const { compareModels } = require('./ort_compare');
const { loadManifest, intRanges } = require('../models/check_fixtures');

// Inputs for the extra (downloaded or generated) models: their symbolic dims (an unnamed one as
// INPUT:AXIS) and integer ranges, small enough to keep the test fast.
const EXTRA_BINDINGS = {
  'ch_PP-OCRv4_det_infer': { dims: { 'p2o.DynamicDimension.0': 1, 'p2o.DynamicDimension.1': 64, 'p2o.DynamicDimension.2': 64 } },
  'ch_PP-OCRv4_rec_infer': { dims: { 'p2o.DynamicDimension.0': 1, 'p2o.DynamicDimension.1': 160 } },
  'ch_ppocr_mobile_v2.0_cls_infer': { dims: { 'p2o.DynamicDimension.0': 1, 'p2o.DynamicDimension.1': 48, 'p2o.DynamicDimension.2': 192 } },
  silero_vad_legacy: { dims: { batch: 1, sequence: 512 }, intRanges: { sr: [16000, 16001] } },
  bert_l2_scoped: { dims: { batch: 1, seq: 8 }, intRanges: { input_ids: [0, 100], attention_mask: [1, 2] } },
  gpt_l2_scoped: { dims: { batch: 1, seq: 8 }, intRanges: { input_ids: [0, 100], attention_mask: [1, 2] } },
  vit_l2_scoped: { dims: { batch: 1 } },
  silero_vad_v5: { dims: { 'input:0': 1, 'input:1': 512, 'state:1': 1 }, intRanges: { sr: [16000, 16001] } },
};

// op → count over the main graph and every subgraph (If/Loop/Scan bodies are optimized too).
function deepHistogram(buf) {
  const hist = {};
  const walkGraph = (s, e) => { for (const [f, w, a, b] of wire.fields(buf, s, e)) if (f === 1 && w === 2) walkNode(a, b); };
  const walkAttr = (s, e) => { for (const [f, w, a, b] of wire.fields(buf, s, e)) if (w === 2 && (f === 6 || f === 11)) walkGraph(a, b); };
  const walkNode = (s, e) => {
    let op = '';
    for (const [f, w, a, b] of wire.fields(buf, s, e)) {
      if (f === 4 && w === 2) op = buf.toString('utf8', a, b);
      if (f === 5 && w === 2) walkAttr(a, b);
    }
    hist[op] = (hist[op] || 0) + 1;
  };
  for (const [f, w, a, b] of wire.fields(buf, 0, buf.length)) if (f === 7 && w === 2) walkGraph(a, b);
  return hist;
}
const total = (hist) => Object.values(hist).reduce((s, n) => s + n, 0);

const KNOWN = JSON.parse(fs.readFileSync(path.join(__dirname, 'ort_profile_known.json'), 'utf8'));

function histogramDiff(a, b) {  // op → a - b, nonzero entries only
  const diff = {};
  for (const op of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const d = (a[op] || 0) - (b[op] || 0);
    if (d) diff[op] = d;
  }
  return diff;
}

const size = (diff) => Object.values(diff).reduce((s, d) => s + Math.abs(d), 0);
const text = (diff) => Object.keys(diff).sort().map((op) => `${op} ${diff[op] > 0 ? '+' : ''}${diff[op]}`).join(', ') || 'none';

// Within the pinned difference: every op differs in the same direction by no more than pinned.
function withinPinned(diff, pinned) {
  for (const [op, d] of Object.entries(diff)) {
    const p = pinned[op] || 0;
    if (Math.sign(d) !== Math.sign(p) || Math.abs(d) > Math.abs(p)) return false;
  }
  return true;
}

async function main() {
  const [cli, dir, work, ...extra] = process.argv.slice(2);
  if (!cli || !dir || !work) {
    console.error('usage: ort_profile.js CLI FIXTURES_DIR WORK [EXTRA.onnx ...]');
    return 2;
  }
  fs.mkdirSync(work, { recursive: true });
  const fixtures = loadManifest(dir).filter((f) => !f.rewrite_of && f.opset === 17 && f.shapes === 'static');
  const only = (process.env.PASSLENS_ORT_PROFILE_ONLY || '').split(',').filter(Boolean);
  const models = fixtures.map((f) => ({ file: path.join(dir, f.file), fixture: f }))
    .concat(extra.filter((e) => fs.existsSync(e)).map((e) => ({ file: e, fixture: null })))
    .filter((m) => !only.length || only.some((w) => path.basename(m.file).includes(w)));
  const problems = [];
  const tally = { basic: { equal: 0, near: 0, total: 0 }, extended: { equal: 0, near: 0, total: 0 } };
  for (const { file, fixture } of models) {
    const stem = path.basename(file, '.onnx');
    for (const level of ['basic', 'extended']) {
      const mine = path.join(work, `${stem}.passlens-ort-${level}.onnx`);
      const theirs = path.join(work, `${stem}.ort-${level}.onnx`);
      const r = spawnSync(cli, ['optimize', file, '-o', mine, '--profile', 'onnxruntime', '--level', level], { encoding: 'utf8' });
      if (r.status !== 0) {
        problems.push(`${stem} ${level}: optimize --profile onnxruntime exit ${r.status}: ${(r.stderr || '').trim()}`);
        continue;
      }
      await ort.InferenceSession.create(file, { graphOptimizationLevel: level, optimizedModelFilePath: theirs, logSeverityLevel: 3 });
      const a = deepHistogram(fs.readFileSync(mine)), b = deepHistogram(fs.readFileSync(theirs));
      const diff = histogramDiff(a, b);
      const pinned = (KNOWN[stem] || {})[level] || {};
      const t = tally[level];
      t.total++;
      if (size(diff) === 0) t.equal++;
      else if (size(diff) <= 2) t.near++;
      let verdict = 'equal';
      if (size(diff) > 0) verdict = withinPinned(diff, pinned) ? 'pinned' : 'FAIL';
      if (verdict === 'pinned' && size(diff) < size(pinned)) verdict = 'pinned (smaller than the table: shrink ort_profile_known.json)';
      console.log(`${verdict === 'FAIL' ? 'FAIL' : 'ok  '} ${stem} ${level}: PassLens ${total(a)} nodes, ONNX Runtime ${total(b)}; ` +
                  `difference (PassLens - ONNX Runtime) ${text(diff)}${verdict !== 'equal' ? ` [${verdict}; pinned ${text(pinned)}]` : ''}`);
      if (verdict === 'FAIL') problems.push(`${stem} ${level}: op histogram differs from ONNX Runtime's by ${text(diff)}, pinned ${text(pinned)}`);
      // PassLens's output computes what the export computes, in ONNX Runtime.
      const extra = EXTRA_BINDINGS[stem] || {};
      const bindings = fixture && fixture.bindings ? fixture.bindings : [{ dims: extra.dims || {}, seed: 1 }];
      for (const bnd of bindings.slice(0, 1)) {
        const lines = [];
        let ok = false;
        try {
          ok = await compareModels(file, mine, { dims: bnd.dims, seed: bnd.seed, intRanges: fixture ? intRanges(fixture) : extra.intRanges || {},
                                                rtol: 1e-3, atol: 1e-4, log: (l) => lines.push(l) });
        } catch (e) {
          lines.push(e.message);
        }
        if (!ok) problems.push(`${stem} ${level}: outputs differ from the export's in ONNX Runtime:\n  ${lines.join('\n  ')}`);
      }
    }
  }
  for (const [level, t] of Object.entries(tally))
    console.log(`${level}: histogram equal to ONNX Runtime's on ${t.equal} of ${t.total} models, within 2 nodes on ${t.near} more`);
  for (const p of problems) console.error(p);
  return problems.length ? 1 : 0;
}

main().then((code) => process.exit(code), (e) => { console.error(e.stack || e.message); process.exit(1); });
