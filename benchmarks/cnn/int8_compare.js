// Tessel INT8, Tessel f32, ONNX Runtime INT8 (QDQ model with Tessel's ranges) and ONNX Runtime f32, batch
// 1, interleaved round by round (order rotated each round) so all four see the same machine load.
//   node benchmarks/cnn/int8_compare.js --tessel PATH --work DIR [--names resnet18,mobilenet_v2]
//        [--rounds 7] [--iterations 10] [--threads 1]
// Expects in --work (benchmarks/cnn/int8_run.sh makes them): M_photo.onnx, M_qdq.onnx, M_f32_b1.tsl,
// M_int8_mse_b1.tsl and M_photo.input.npy.
'use strict';
const {spawn, spawnSync} = require('child_process');
const fs = require('fs');
const path = require('path');
const readline = require('readline');

function parseArgs(argv) {
  const args = {names: 'resnet18,mobilenet_v2', rounds: '7', iterations: '10', threads: '1'};
  for (let i = 0; i < argv.length; i += 2) args[argv[i].replace(/^--/, '')] = argv[i + 1];
  return args;
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

class Ort {
  constructor(onnx, input, threads) {
    this.proc = spawn(process.execPath, [path.join(__dirname, 'ort_bench.js'), onnx, threads, input], {stdio: ['pipe', 'pipe', 'inherit']});
    this.lines = readline.createInterface({input: this.proc.stdout})[Symbol.asyncIterator]();
  }
  async next() { const {value, done} = await this.lines.next(); if (done) throw new Error('ort worker exited'); return JSON.parse(value); }
  async run(k) { this.proc.stdin.write(`run ${k}\n`); return (await this.next()).samples_ms; }
  close() { this.proc.stdin.end(); }
}

function tessel(bin, tsl, threads, k) {
  const r = spawnSync(bin, ['bench', tsl, '--threads', threads, '--iterations', String(k), '--warmup', '2'], {encoding: 'utf8'});
  if (r.status !== 0) throw new Error(`tessel bench ${tsl}: ${r.stderr || r.stdout}`);
  const lines = r.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]).samples_ms;
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const k = Number(a.iterations);
  console.log(`${a.rounds} rounds x ${k} runs per side, batch 1, ${a.threads} thread(s), interleaved`);
  console.log('| model | Tessel int8 ms | Tessel f32 ms | ORT int8 ms | ORT f32 ms | Tessel int8/f32 | ORT int8/f32 | Tessel int8 / ORT int8 | Tessel f32 / ORT f32 |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const name of a.names.split(',')) {
    const w = (f) => path.join(a.work, f);
    const input = w(`${name}_photo.input.npy`);
    const ortQ = new Ort(w(`${name}_qdq.onnx`), input, a.threads);
    const ortF = new Ort(w(`${name}_photo.onnx`), input, a.threads);
    await ortQ.next(); await ortF.next();
    const sides = {
      t8: () => tessel(a.tessel, w(`${name}_int8_mse_b1.tsl`), a.threads, k),
      t32: () => tessel(a.tessel, w(`${name}_f32_b1.tsl`), a.threads, k),
      o8: () => ortQ.run(k),
      o32: () => ortF.run(k),
    };
    const ms = {t8: [], t32: [], o8: [], o32: []};
    const order = Object.keys(sides);
    for (let r = 0; r < Number(a.rounds); ++r) {
      for (let i = 0; i < order.length; ++i) {
        const s = order[(i + r) % order.length];
        ms[s].push(...await sides[s]());
      }
      process.stderr.write(`  ${name} round ${r + 1}/${a.rounds}\r`);
    }
    ortQ.close(); ortF.close();
    const m = Object.fromEntries(order.map((s) => [s, median(ms[s])]));
    console.log(`| ${name} | ${m.t8.toFixed(2)} | ${m.t32.toFixed(2)} | ${m.o8.toFixed(2)} | ${m.o32.toFixed(2)} | ` +
                `${(m.t8 / m.t32).toFixed(2)} | ${(m.o8 / m.o32).toFixed(2)} | ${(m.t8 / m.o8).toFixed(2)} | ${(m.t32 / m.o32).toFixed(2)} |`);
  }
}
main().catch((e) => { console.error(`int8_compare: ${e.message}`); process.exit(1); });
