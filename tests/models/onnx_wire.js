// Just enough of the protobuf wire format to count an ONNX model's nodes without onnx or torch:
// ModelProto.graph (7) -> GraphProto.node (1) -> NodeProto.op_type (4), attribute (5) ->
// AttributeProto.g (6) / graphs (11).
'use strict';

function readVarint(buf, pos) {
  let value = 0;
  let scale = 1;
  for (;;) {
    if (pos >= buf.length) throw new Error('truncated varint');
    const byte = buf[pos++];
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return [value, pos];
    scale *= 128;
    if (scale > 2 ** 63) throw new Error('varint too long');
  }
}

// Yields [fieldNumber, wireType, start, end] for each field of the message in buf[start, end).
function* fields(buf, start = 0, end = buf.length) {
  let pos = start;
  while (pos < end) {
    const [key, p] = readVarint(buf, pos);
    const field = Math.floor(key / 8);
    const wire = key % 8;
    pos = p;
    let from = pos;
    if (wire === 0) [, pos] = readVarint(buf, pos);
    else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else if (wire === 2) { let len; [len, from] = readVarint(buf, pos); pos = from + len; }
    else throw new Error(`unsupported wire type ${wire} at byte ${pos}`);
    if (pos > end) throw new Error('field runs past the end of its message');
    yield [field, wire, from, pos];
  }
}

function subMessages(buf, start, end, number) {
  const out = [];
  for (const [field, wire, from, to] of fields(buf, start, end)) if (field === number && wire === 2) out.push([from, to]);
  return out;
}

// { nodeCount, opHistogram, subgraphNodeCount } of the model's main graph.
function graphStats(buf) {
  const graphs = subMessages(buf, 0, buf.length, 7);
  if (graphs.length !== 1) throw new Error(`expected one ModelProto.graph, found ${graphs.length}`);
  const [gStart, gEnd] = graphs[0];
  const opHistogram = {};
  let nodeCount = 0;
  let subgraphNodeCount = 0;
  const countAll = (start, end) => {  // nodes of a graph and of all its subgraphs
    let n = 0;
    for (const [nStart, nEnd] of subMessages(buf, start, end, 1)) n += 1 + nestedNodes(nStart, nEnd);
    return n;
  };
  const nestedNodes = (nStart, nEnd) => {
    let n = 0;
    for (const [aStart, aEnd] of subMessages(buf, nStart, nEnd, 5)) {
      for (const [field, wire, from, to] of fields(buf, aStart, aEnd)) if (wire === 2 && (field === 6 || field === 11)) n += countAll(from, to);
    }
    return n;
  };
  for (const [nStart, nEnd] of subMessages(buf, gStart, gEnd, 1)) {
    nodeCount++;
    let op = '';
    for (const [field, wire, from, to] of fields(buf, nStart, nEnd)) if (field === 4 && wire === 2) op = buf.toString('utf8', from, to);
    opHistogram[op] = (opHistogram[op] || 0) + 1;
    subgraphNodeCount += nestedNodes(nStart, nEnd);
  }
  return { nodeCount, opHistogram, subgraphNodeCount };
}

module.exports = { fields, graphStats };
