// Times ONNX Runtime's session creation with graph optimizations at a level, writing the
// optimized model (optimizedModelFilePath), as the baseline for `passlens-cli optimize`.
//   node ort_session.js MODEL.onnx OUT.onnx [basic|extended|all]
// Prints one line: "ort_session_ms <milliseconds>".
const ort = require('onnxruntime-node');

async function main() {
  const [model, out, level = 'extended'] = process.argv.slice(2);
  if (!model || !out) {
    console.error('usage: node ort_session.js MODEL.onnx OUT.onnx [basic|extended|all]');
    process.exit(2);
  }
  const start = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: level,
    optimizedModelFilePath: out,
    executionProviders: ['cpu'],
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  await session.release();
  console.log(`ort_session_ms ${ms.toFixed(1)}`);
}

main().catch((e) => {
  console.error(`ort_session: ${e.message}`);
  process.exit(1);
});
