// ONNX Runtime side of benchmarks/cnn: loads an ONNX model once with onnxruntime-node and, for each
// line "run K" read on stdin, times K runs at batch 1 and answers one JSON line of per-run
// milliseconds. Kept alive between rounds so the driver can interleave it with Tessel.
//
//   node ort_bench.js MODEL.onnx THREADS INPUT...     INPUT: NAME=FILE.npy, or a bare FILE.npy for the first input
'use strict';
const path = require('path');
const fs = require('fs');
const readline = require('readline');

const ortDir = process.env.ORT_NODE_DIR ||
    path.join(__dirname, '..', '..', 'third_party', 'npm', 'node_modules', 'onnxruntime-node');
const ort = require(ortDir);

// The .npy element types the models take, as ONNX Runtime tensor types and typed arrays.
const NPY_TYPES = {
  '<f4': ['float32', Float32Array],
  '<i8': ['int64', BigInt64Array],
  '<i4': ['int32', Int32Array],
};

// A little-endian .npy file (version 1 header) as an ONNX Runtime tensor.
function readNpy(file) {
  const buf = fs.readFileSync(file);
  const headerLen = buf.readUInt16LE(8);
  const header = buf.toString('latin1', 10, 10 + headerLen);
  const descr = (header.match(/'descr': '([^']*)'/) || [])[1];
  if (!NPY_TYPES[descr]) throw new Error(`${file}: element type ${descr}; expected one of ${Object.keys(NPY_TYPES)}`);
  const [type, Array] = NPY_TYPES[descr];
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const start = 10 + headerLen;
  const data = new Array(buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + buf.length));
  return new ort.Tensor(type, data, shape);
}

async function main() {
  const [model, threads, ...inputs] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {};
  for (const spec of inputs) {
    const eq = spec.indexOf('=');
    feeds[eq < 0 ? session.inputNames[0] : spec.slice(0, eq)] = readNpy(eq < 0 ? spec : spec.slice(eq + 1));
  }
  await session.run(feeds);  // first run allocates and plans
  process.stdout.write(JSON.stringify({ready: true, ort_version: ort.env.versions ? ort.env.versions.common : ''}) + '\n');
  const rl = readline.createInterface({input: process.stdin});
  for await (const line of rl) {
    const m = line.match(/^run (\d+)$/);
    if (!m) break;
    const ms = [];
    for (let i = 0; i < Number(m[1]); ++i) {
      const t0 = process.hrtime.bigint();
      await session.run(feeds);
      ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    process.stdout.write(JSON.stringify({samples_ms: ms}) + '\n');
  }
}

main().catch((e) => {
  process.stderr.write(`ort_bench: ${e.message}\n`);
  process.exit(1);
});
