// Tessel vs ONNX Runtime on CNNs, side by side in one run: for each model and thread count, rounds
// alternate `tessel bench` on the compiled artifact with ONNX Runtime (onnxruntime-node, kept loaded
// in a child process) on the same ONNX file, so both see the same machine load; the table reports
// the medians over all timed runs and the ratio Tessel / ONNX Runtime (below 1: Tessel is faster), and the
// median of the per-round ratios (each round times both sides back to back: robust on a shared host).
//
//   node benchmarks/cnn/compare.js --tessel PATH --models DIR [--threads 1,2] [--rounds 7]
//        [--iterations 10] [--names resnet18,mobilenet_v2] [--work DIR] [--json OUT.json] [--spin yes]
//
// --spin yes runs Tessel with spinning pool workers (`tessel bench --spin`), as ONNX Runtime's pool
// does by default: faster on idle cores, slower when other processes compete for them.
'use strict';
const {spawn, spawnSync} = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const readline = require('readline');

function parseArgs(argv) {
  const args = {threads: '1,2', rounds: '7', iterations: '10', names: 'resnet18,mobilenet_v2',
                work: path.join(os.homedir(), '.cache', 'tessel', 'bench-cnn')};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith('--') || i + 1 >= argv.length) throw new Error(`bad argument '${argv[i]}' (see the header)`);
    args[argv[i].slice(2)] = argv[i + 1];
  }
  for (const need of ['tessel', 'models']) {
    if (!args[need]) throw new Error(`--${need} is required`);
  }
  return args;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : 0.5 * (s[m - 1] + s[m]);
}

// One ONNX Runtime child per (model, threads): answers "run K" with K timings.
class OrtWorker {
  constructor(onnx, input, threads) {
    this.proc = spawn(process.execPath, [path.join(__dirname, 'ort_bench.js'), onnx, input, String(threads)],
                      {stdio: ['pipe', 'pipe', 'inherit']});
    this.lines = readline.createInterface({input: this.proc.stdout})[Symbol.asyncIterator]();
  }
  async next() {
    const {value, done} = await this.lines.next();
    if (done) throw new Error('onnxruntime worker exited');
    return JSON.parse(value);
  }
  async ready() { return this.next(); }
  async run(k) {
    this.proc.stdin.write(`run ${k}\n`);
    return (await this.next()).samples_ms;
  }
  close() { this.proc.stdin.end(); }
}

function tesselBench(tessel, tsl, threads, iterations, spin) {
  const argv = ['bench', tsl, '--threads', String(threads), '--iterations', String(iterations), '--warmup', '2'];
  if (spin) argv.push('--spin');
  const r = spawnSync(tessel, argv, {encoding: 'utf8'});
  if (r.status !== 0) throw new Error(`tessel bench failed: ${r.stderr || r.stdout}`);
  const lines = r.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]).samples_ms;
}

function compile(tessel, onnx, tsl) {
  const r = spawnSync(tessel, ['compile', onnx, '-o', tsl, '--pipeline', 'cnn'], {encoding: 'utf8'});
  if (r.status !== 0) throw new Error(`tessel compile failed: ${r.stderr || r.stdout}`);
  return r.stdout.trim().split('\n').filter((l) => l.startsWith('kernels:'))[0] || '';
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  fs.mkdirSync(args.work, {recursive: true});
  const threads = args.threads.split(',').map(Number);
  const rounds = Number(args.rounds);
  const iterations = Number(args.iterations);
  const rows = [];
  console.log(`machine: ${os.cpus()[0].model}, ${os.cpus().length} logical CPUs, load ${os.loadavg()[0].toFixed(1)}; ` +
              `${rounds} rounds x ${iterations} runs per side, batch 1, fp32, Tessel workers ` +
              `${args.spin === 'yes' ? 'spin' : 'sleep'} between operators`);
  for (const name of args.names.split(',')) {
    const onnx = path.join(args.models, `${name}_op17.onnx`);
    const input = path.join(args.models, `${name}.input.npy`);
    const tsl = path.join(args.work, `${name}.tsl`);
    const kernels = compile(args.tessel, onnx, tsl);
    console.log(`${name}: compiled with --pipeline cnn; ${kernels}`);
    for (const n of threads) {
      const ort = new OrtWorker(onnx, input, n);
      const info = await ort.ready();
      const tesselMs = [];
      const ortMs = [];
      const roundRatios = [];
      for (let r = 0; r < rounds; ++r) {
        // Alternate which side goes first so that neither always follows the other's cache state.
        let t;
        let o;
        if (r % 2 === 0) {
          t = tesselBench(args.tessel, tsl, n, iterations, args.spin === 'yes');
          o = await ort.run(iterations);
        } else {
          o = await ort.run(iterations);
          t = tesselBench(args.tessel, tsl, n, iterations, args.spin === 'yes');
        }
        tesselMs.push(...t);
        ortMs.push(...o);
        // Each round's two medians were taken moments apart: their ratio cancels the machine's slower
        // and faster spells (shared hosts), which pooled medians do not.
        roundRatios.push(median(t) / median(o));
        process.stderr.write(`  ${name} ${n}t round ${r + 1}/${rounds}\r`);
      }
      ort.close();
      const row = {model: name, threads: n, tessel_median_ms: median(tesselMs), ort_median_ms: median(ortMs),
                   tessel_min_ms: Math.min(...tesselMs), ort_min_ms: Math.min(...ortMs), ort_version: info.ort_version};
      row.ratio = row.tessel_median_ms / row.ort_median_ms;
      row.round_ratio = median(roundRatios);
      rows.push(row);
    }
  }
  process.stderr.write('\n');
  const pad = (s, w) => String(s).padStart(w);
  console.log(`\n| model        | threads | Tessel median ms | ORT ${rows[0].ort_version} median ms | Tessel / ORT | ` +
              `per-round ratio | Tessel min | ORT min |`);
  console.log('| ------------ | ------- | ---------------- | ----------------------- | ------------ | --------------- | ---------- | ------- |');
  for (const r of rows) {
    console.log(`| ${r.model.padEnd(12)} | ${pad(r.threads, 7)} | ${pad(r.tessel_median_ms.toFixed(2), 16)} | ` +
                `${pad(r.ort_median_ms.toFixed(2), 23)} | ${pad(r.ratio.toFixed(2), 12)} | ` +
                `${pad(r.round_ratio.toFixed(2), 15)} | ` +
                `${pad(r.tessel_min_ms.toFixed(2), 10)} | ${pad(r.ort_min_ms.toFixed(2), 7)} |`);
  }
  if (args.json) fs.writeFileSync(args.json, JSON.stringify(rows, null, 2) + '\n');
}

main().catch((e) => {
  console.error(`compare: ${e.message}`);
  process.exit(1);
});
