// ONNX TensorProto files (the backend test-data layout passlens-cli run reads with --input-dir
// and writes with --out-dir) to and from onnxruntime-node tensors, without a protobuf library:
// dims (field 1), data_type (2), name (8) and raw_data (9) are all PassLens writes for numbers.
'use strict';
const { fields } = require('../models/onnx_wire');

// ONNX data_type -> [ORT type name, typed array]
const TYPES = {
  1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array], 4: ['uint16', Uint16Array],
  5: ['int16', Int16Array], 6: ['int32', Int32Array], 7: ['int64', BigInt64Array], 9: ['bool', Uint8Array],
  11: ['float64', Float64Array], 12: ['uint32', Uint32Array], 13: ['uint64', BigUint64Array],
};
const CODE_OF = Object.fromEntries(Object.entries(TYPES).map(([code, [name]]) => [name, Number(code)]));

function varint(value) {
  const out = [];
  let v = BigInt.asUintN(64, BigInt(value));
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    out.push(byte);
  } while (v !== 0n);
  return Buffer.from(out);
}

function lengthDelimited(field, bytes) {
  return Buffer.concat([varint(field * 8 + 2), varint(bytes.length), bytes]);
}

// An ORT tensor as TensorProto bytes.
function encodeTensor(name, tensor) {
  const code = CODE_OF[tensor.type];
  if (!code) throw new Error(`tensor '${name}': no TensorProto encoding for type ${tensor.type}`);
  const dims = Buffer.concat(Array.from(tensor.dims, (d) => varint(d)));
  const data = tensor.data;
  const raw = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.concat([
    lengthDelimited(1, dims), varint(2 * 8), varint(code), lengthDelimited(8, Buffer.from(name, 'utf8')), lengthDelimited(9, raw),
  ]);
}

function readVarintAt(buf, pos) {
  let value = 0n;
  let shift = 0n;
  for (;;) {
    const byte = buf[pos++];
    value |= BigInt(byte & 0x7f) << shift;
    if (byte < 0x80) return [BigInt.asIntN(64, value), pos];
    shift += 7n;
  }
}

// TensorProto bytes (raw_data form) as { name, type, dims, data }.
function decodeTensor(buf) {
  let name = '';
  let code = 0;
  const dims = [];
  let raw = null;
  for (const [field, wire, from, to] of fields(buf)) {
    if (field === 1 && wire === 2) for (let p = from; p < to;) { let d; [d, p] = readVarintAt(buf, p); dims.push(Number(d)); }
    else if (field === 1 && wire === 0) dims.push(Number(readVarintAt(buf, from)[0]));
    else if (field === 2 && wire === 0) code = Number(readVarintAt(buf, from)[0]);
    else if (field === 8 && wire === 2) name = buf.toString('utf8', from, to);
    else if (field === 9 && wire === 2) raw = buf.subarray(from, to);
  }
  const entry = TYPES[code];
  if (!entry) throw new Error(`tensor '${name}': data_type ${code} is not one this reader knows`);
  const [type, Typed] = entry;
  const count = dims.reduce((a, b) => a * b, 1);
  if (raw === null) {
    if (count !== 0) throw new Error(`tensor '${name}': no raw_data`);
    raw = Buffer.alloc(0);
  }
  if (raw.length !== count * Typed.BYTES_PER_ELEMENT) throw new Error(`tensor '${name}': ${raw.length} bytes of raw_data for dims [${dims}]`);
  const copy = new Uint8Array(raw);  // aligned for the typed view
  return { name, type, dims, data: new Typed(copy.buffer, 0, count) };
}

module.exports = { encodeTensor, decodeTensor };
