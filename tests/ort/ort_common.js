// Shared by the tests/ort scripts: argument parsing, seeded example inputs, the JSON tensor
// format, output comparison. Loaded with onnxruntime-node on NODE_PATH (ort_node.sh sets it).
'use strict';
const fs = require('fs');

class UsageError extends Error {}

// --name value options after positional arguments; flags listed in `flags` take no value.
function parseArgs(argv, flags = []) {
  const positional = [];
  const options = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) { positional.push(arg); continue; }
    const name = arg.slice(2);
    if (flags.includes(name)) { options[name] = true; continue; }
    if (i + 1 >= argv.length) throw new UsageError(`${arg} needs a value`);
    options[name] = argv[++i];
  }
  return { positional, options };
}

// "batch=3,seq=5" -> { batch: 3, seq: 5 }
function parseDims(text) {
  const dims = {};
  if (!text) return dims;
  for (const part of text.split(',')) {
    const m = /^([^=]+)=(\d+)$/.exec(part.trim());
    if (!m) throw new UsageError(`bad --dims entry '${part}' (expected NAME=VALUE)`);
    dims[m[1]] = Number(m[2]);
  }
  return dims;
}

function parseRange(text) {
  const m = /^(-?\d+),(-?\d+)$/.exec(text || '');
  if (!m || Number(m[1]) >= Number(m[2])) throw new UsageError(`bad --int-range '${text}' (expected LO,HI with LO < HI)`);
  return [Number(m[1]), Number(m[2])];
}

function numberOption(options, name, fallback) {
  if (options[name] === undefined) return fallback;
  const value = Number(options[name]);
  if (!Number.isFinite(value)) throw new UsageError(`--${name} needs a number, got '${options[name]}'`);
  return value;
}

// Numerical Recipes LCG, 24 bits per draw; tests/models/generate.py draws the same numbers.
function lcg(seed) {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state >>> 8;
  };
}

const TYPED = {
  float32: Float32Array, float64: Float64Array, int32: Int32Array, int64: BigInt64Array,
  int8: Int8Array, uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array, bool: Uint8Array,
};

function concreteShape(name, shape, dims) {
  return shape.map((d, axis) => {
    if (typeof d === 'number' && d >= 0) return d;
    if (typeof d === 'string' && d !== '' && dims[d] !== undefined) return dims[d];
    if ((d === '' || d == null) && dims[`${name}:${axis}`] !== undefined) return dims[`${name}:${axis}`];  // an unnamed axis by position
    throw new UsageError(`input '${name}' axis ${axis} is symbolic (${d === '' || d == null ? 'unnamed' : `'${d}'`}): pass --dims ${d || 'NAME'}=N`);
  });
}

// Inputs in session order, one LCG stream: floats uniform in [-1, 1) (exact in float32), ints
// in [lo, hi) (intRanges[name] or defaultRange), bools 0/1.
function makeInputs(ort, session, { dims = {}, seed = 1, intRanges = {}, defaultRange = [0, 16] } = {}) {
  const next = lcg(seed);
  const feeds = {};
  for (const meta of session.inputMetadata) {
    if (!meta.isTensor) throw new UsageError(`input '${meta.name}' is not a tensor`);
    const shape = concreteShape(meta.name, meta.shape, dims);
    const count = shape.reduce((a, b) => a * b, 1);
    const Typed = TYPED[meta.type];
    if (!Typed) throw new UsageError(`input '${meta.name}': no random inputs for type ${meta.type}`);
    const data = new Typed(count);
    const [lo, hi] = intRanges[meta.name] || defaultRange;
    for (let i = 0; i < count; i++) {
      const bits = next();
      if (meta.type === 'float32' || meta.type === 'float64') data[i] = bits / 16777216 * 2 - 1;
      else if (meta.type === 'bool') data[i] = bits & 1;
      else if (meta.type === 'int64') data[i] = BigInt(lo + bits % (hi - lo));
      else data[i] = lo + bits % (hi - lo);
    }
    feeds[meta.name] = new ort.Tensor(meta.type, data, shape);
  }
  return feeds;
}

// JSON tensor files: { "name": { "type": "float32", "dims": [..], "data": [..] } }; NaN and
// infinities are written as the strings "NaN", "Infinity", "-Infinity".
function toJsonValue(x) {
  if (typeof x === 'bigint') return Number(x);
  if (typeof x === 'boolean') return x ? 1 : 0;
  return Number.isFinite(x) ? x : String(x);
}

function writeTensors(file, tensors) {
  const out = {};
  for (const [name, t] of Object.entries(tensors)) {
    out[name] = { type: t.type, dims: Array.from(t.dims), data: Array.from(t.data, toJsonValue) };
  }
  fs.writeFileSync(file, JSON.stringify(out) + '\n');
}

function readTensors(ort, file) {
  let parsed;
  try { parsed = JSON.parse(fs.readFileSync(file, 'utf8')); } catch (e) { throw new UsageError(`${file}: ${e.message}`); }
  const feeds = {};
  for (const [name, t] of Object.entries(parsed)) {
    const Typed = TYPED[t.type];
    if (!Typed || !Array.isArray(t.dims) || !Array.isArray(t.data)) throw new UsageError(`${file}: '${name}' needs type, dims, data`);
    const count = t.dims.reduce((a, b) => a * b, 1);
    if (count !== t.data.length) throw new UsageError(`${file}: '${name}' has ${t.data.length} values for dims [${t.dims}]`);
    const values = t.data.map(Number);
    feeds[name] = new ort.Tensor(t.type, t.type === 'int64' ? BigInt64Array.from(values, BigInt) : Typed.from(values), t.dims);
  }
  return feeds;
}

async function createSession(ort, path) {
  if (!fs.existsSync(path)) throw new UsageError(`${path}: no such file`);
  try {
    return await ort.InferenceSession.create(path);
  } catch (e) {
    throw new UsageError(`${path}: ONNX Runtime refuses it: ${e.message}`);
  }
}

function asNumber(x) { return typeof x === 'bigint' ? Number(x) : Number(x); }

// Worst element of |a - b| against atol + rtol*|b| (NaN matches NaN, equal infinities match).
function compareTensors(a, b, rtol, atol) {
  const result = { ok: true, worstAbs: 0, worstExcess: -Infinity, index: -1, a: null, b: null, problem: null };
  if (a.type !== b.type) return { ...result, ok: false, problem: `type ${a.type} vs ${b.type}` };
  if (a.dims.length !== b.dims.length || a.dims.some((d, i) => d !== b.dims[i])) {
    return { ...result, ok: false, problem: `dims [${a.dims}] vs [${b.dims}]` };
  }
  for (let i = 0; i < a.data.length; i++) {
    const x = asNumber(a.data[i]);
    const y = asNumber(b.data[i]);
    if (Number.isNaN(x) && Number.isNaN(y)) continue;
    if (x === y) continue;
    const diff = Math.abs(x - y);
    const excess = Number.isNaN(diff) ? Infinity : diff - (atol + rtol * Math.abs(y));
    if (excess > result.worstExcess) Object.assign(result, { worstExcess: excess, index: i, a: x, b: y });
    if (!(diff <= result.worstAbs)) result.worstAbs = diff;
    if (excess > 0) result.ok = false;
  }
  return result;
}

// One output of a comparison: ok, the text after its name, and how far past the tolerance it is.
function compareOutput(a, b, rtol, atol) {
  const r = compareTensors(a, b, rtol, atol);
  const where = r.problem ? r.problem : r.index < 0 ? 'identical' : `max |a-b| ${r.worstAbs.toExponential(3)}, worst at ${r.index}: ${r.a} vs ${r.b}`;
  return { ok: r.ok, where, excess: r.problem ? Infinity : r.worstExcess };
}

// The options every comparing script takes: --dims, --seed, --rtol, --atol, --int-range.
function compareOptions(options) {
  return {
    dims: parseDims(options.dims), seed: numberOption(options, 'seed', 1),
    rtol: numberOption(options, 'rtol', 1e-4), atol: numberOption(options, 'atol', 1e-5),
    defaultRange: options['int-range'] ? parseRange(options['int-range']) : undefined,
  };
}

function sums(tensor) {
  let sum = 0;
  let absSum = 0;
  for (const v of tensor.data) {
    const x = asNumber(v);
    sum += x;
    absSum += Math.abs(x);
  }
  return { sum, absSum };
}

// Runs main(); UsageError -> exit 2, a failed check -> the code main returns.
function run(main) {
  main().then((code) => process.exit(code || 0)).catch((e) => {
    console.error(`${require('path').basename(process.argv[1])}: ${e instanceof UsageError ? '' : 'error: '}${e.message}`);
    process.exit(2);
  });
}

module.exports = {
  UsageError, parseArgs, parseDims, parseRange, numberOption, lcg, makeInputs, writeTensors, readTensors,
  createSession, compareTensors, compareOutput, compareOptions, sums, run,
};
