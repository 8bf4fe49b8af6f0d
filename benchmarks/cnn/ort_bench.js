// ONNX Runtime side of benchmarks/cnn: loads an ONNX model once with onnxruntime-node and, for each
// line "run K" read on stdin, times K runs at batch 1 and answers one JSON line of per-run
// milliseconds. Kept alive between rounds so the driver can interleave it with Tessel.
'use strict';
const path = require('path');
const fs = require('fs');
const readline = require('readline');

const ortDir = process.env.ORT_NODE_DIR ||
    path.join(__dirname, '..', '..', 'third_party', 'npm', 'node_modules', 'onnxruntime-node');
const ort = require(ortDir);

// A little-endian f32 .npy file as {shape, data}.
function readNpy(file) {
  const buf = fs.readFileSync(file);
  const headerLen = buf.readUInt16LE(8);
  const header = buf.toString('latin1', 10, 10 + headerLen);
  if (!header.includes("'descr': '<f4'")) throw new Error(`${file}: expected little-endian float32`);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const start = 10 + headerLen;
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + buf.length));
  return {shape, data};
}

async function main() {
  const [model, inputNpy, threads] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const x = readNpy(inputNpy);
  const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', x.data, x.shape)};
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
