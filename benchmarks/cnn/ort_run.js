// Runs an ONNX model once with onnxruntime-node on a float32 .npy and writes the first output as a
// float32 .npy (for checking ONNX Runtime's results, e.g. of a QDQ model, against Tessel's).
//   node benchmarks/cnn/ort_run.js MODEL.onnx INPUT.npy OUTPUT.npy [threads]
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(process.env.ORT_NODE_DIR ||
                    path.join(__dirname, '..', '..', 'third_party', 'npm', 'node_modules', 'onnxruntime-node'));

function readNpy(file) {
  const buf = fs.readFileSync(file);
  const headerLen = buf.readUInt16LE(8);
  const header = buf.toString('latin1', 10, 10 + headerLen);
  if (!header.includes("'descr': '<f4'")) throw new Error(`${file}: expected little-endian float32`);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const start = 10 + headerLen;
  return {shape, data: new Float32Array(buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + buf.length))};
}

function writeNpy(file, shape, data) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  while ((10 + header.length + 1) % 64 !== 0) header += ' ';
  header += '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1; head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

async function main() {
  const [model, input, output, threads] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {intraOpNumThreads: Number(threads || 1), interOpNumThreads: 1,
                                                            graphOptimizationLevel: 'all'});
  const x = readNpy(input);
  const r = await session.run({[session.inputNames[0]]: new ort.Tensor('float32', x.data, x.shape)});
  const y = r[session.outputNames[0]];
  writeNpy(output, y.dims, y.data);
}

main().catch((e) => { process.stderr.write(`ort_run: ${e.message}\n`); process.exit(1); });
