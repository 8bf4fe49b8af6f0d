// Tessel vs ONNX Runtime on CNNs, side by side in one run: for each model and thread count, rounds
// alternate `tessel bench` on the compiled artifact with ONNX Runtime (onnxruntime-node, kept loaded
// in a child process) on the same ONNX file and the same input, so both see the same machine load; the
// table reports the medians over all timed runs and the ratio Tessel / ONNX Runtime (below 1: Tessel is
// faster), and the median of the per-round ratios (each round times both sides back to back: robust on
// a shared host).
//
//   node benchmarks/cnn/compare.js --tessel PATH --models DIR [--threads 1,2] [--rounds 7]
//        [--iterations 10] [--names resnet18,mobilenet_v2] [--work DIR] [--json OUT.json] [--workers adaptive|spin|sleep]
//   node benchmarks/cnn/compare.js --tessel PATH --zoo DIR [--names a,b] [--threads 1] [--rounds 5]
//        [--iterations auto] [--json OUT.json]
//
// --models: DIR/<name>_op17.onnx and DIR/<name>.input.npy, compiled with --pipeline cnn.
// --zoo: the model zoo as tools/zoo/export_zoo.py writes it (DIR/<name>/opK.onnx at the newest opset
// K, its inputs, meta.json), compiled at -O3 with the zoo's --dim values. A model Tessel cannot compile
// keeps a row with ONNX Runtime's time alone. Each row also lists the ops `tessel compile` left on
// reference kernels and their share of Tessel's time by `tessel inspect --profile`.
// --iterations auto sizes each side's share of a round to about 0.2 s (2 to 20 runs).
// --workers: how Tessel's pool workers wait between operators (`tessel bench --workers`; default
// adaptive: spin within a run and sleep after it, as ONNX Runtime's intra-op pool does by default).
'use strict';
const {spawn, spawnSync} = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const readline = require('readline');

function parseArgs(argv) {
  const zoo = argv.includes('--zoo');
  const args = {threads: zoo ? '1' : '1,2', rounds: zoo ? '5' : '7', iterations: zoo ? 'auto' : '10',
                names: zoo ? '' : 'resnet18,mobilenet_v2',
                work: path.join(os.homedir(), '.cache', 'tessel', zoo ? 'bench-zoo' : 'bench-cnn')};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith('--') || i + 1 >= argv.length) throw new Error(`bad argument '${argv[i]}' (see the header)`);
    args[argv[i].slice(2)] = argv[i + 1];
  }
  if (!args.tessel) throw new Error('--tessel is required');
  if (!args.models === !args.zoo) throw new Error('give one of --models DIR and --zoo DIR');
  return args;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : 0.5 * (s[m - 1] + s[m]);
}

// What one row benchmarks: the ONNX file, its inputs as NAME=FILE.npy (or a bare FILE.npy), and the
// compile flags.
function classicModels(args) {
  return args.names.split(',').map((name) => ({
    name, opset: 17, onnx: path.join(args.models, `${name}_op17.onnx`),
    inputs: [path.join(args.models, `${name}.input.npy`)], compileFlags: ['--pipeline', 'cnn'],
  }));
}

function zooModels(args) {
  const names = args.names ? args.names.split(',') :
      fs.readdirSync(args.zoo).filter((n) => fs.existsSync(path.join(args.zoo, n, 'meta.json'))).sort();
  return names.map((name) => {
    const dir = path.join(args.zoo, name);
    const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'));
    if (!meta.opsets.length) throw new Error(`${name}: PyTorch exported no opset (${JSON.stringify(meta.export_errors)})`);
    const opset = Math.max(...meta.opsets);
    const compileFlags = [];
    for (const [k, v] of Object.entries(meta.dims || {})) compileFlags.push('--dim', `${k}=${v}`);
    return {name, opset, onnx: path.join(dir, `op${opset}.onnx`), compileFlags,
            inputs: meta.inputs.map((i) => `${i}=${path.join(dir, i + '.npy')}`)};
  });
}

// One ONNX Runtime child per (model, threads): answers "run K" with K timings.
class OrtWorker {
  constructor(model, threads) {
    this.proc = spawn(process.execPath, [path.join(__dirname, 'ort_bench.js'), model.onnx, String(threads), ...model.inputs],
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

const inputFlags = (model) => model.inputs.flatMap((i) => ['--input', i]);

function tesselBench(tessel, model, tsl, threads, iterations, workers) {
  const argv = ['bench', tsl, '--threads', String(threads), '--iterations', String(iterations), '--warmup', '2',
                ...inputFlags(model)];
  if (workers) argv.push('--workers', workers);
  const r = spawnSync(tessel, argv, {encoding: 'utf8'});
  if (r.status !== 0) throw new Error(`tessel bench failed: ${r.stderr || r.stdout}`);
  const lines = r.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]).samples_ms;
}

// Compiles; returns {ok, kernels, error, reference: the warning's lines, one per op type left on a
// reference kernel}.
function compile(tessel, model, tsl) {
  const r = spawnSync(tessel, ['compile', model.onnx, '-o', tsl, ...model.compileFlags], {encoding: 'utf8'});
  if (r.status !== 0) return {ok: false, error: (r.stderr || r.stdout).trim().split('\n').pop()};
  const warning = r.stderr.split('\n');
  const at = warning.findIndex((l) => l.includes('run on reference kernels'));
  const reference = at < 0 ? [] : warning.slice(at + 1).filter((l) => l.startsWith('  ')).map((l) => l.trim());
  return {ok: true, kernels: r.stdout.split('\n').filter((l) => l.startsWith('kernels:'))[0] || '', reference};
}

// Per-op medians from `tessel inspect --profile` on the model's input: total ms and ms per reference
// kernel ("reference/GridSample" -> ms), heaviest first.
function profile(tessel, model, tsl) {
  const r = spawnSync(tessel, ['inspect', tsl, '--profile', '--iterations', '5', '--threads', '1', ...inputFlags(model)],
                      {encoding: 'utf8'});
  if (r.status !== 0) return null;
  let total = 0;
  const reference = {};
  for (const line of r.stdout.split('\n')) {
    const m = line.match(/^\s+\d+\s+\S+\s+(\S+)\s.*\s([\d.]+) ms$/);
    if (!m) continue;
    total += Number(m[2]);
    if (m[1].startsWith('reference/')) reference[m[1]] = (reference[m[1]] || 0) + Number(m[2]);
  }
  return {total, reference: Object.entries(reference).sort((a, b) => b[1] - a[1])};
}

async function benchModel(args, model, n, tsl, rows) {
  const rounds = Number(args.rounds);
  const ort = new OrtWorker(model, n);
  const info = await ort.ready();
  let iterations = Number(args.iterations);
  if (args.iterations === 'auto') {
    const probe = median(await ort.run(3));
    iterations = Math.max(2, Math.min(20, Math.round(200 / Math.max(probe, 1e-3))));
  }
  const tesselMs = [];
  const ortMs = [];
  const roundRatios = [];
  for (let r = 0; r < rounds; ++r) {
    // Alternate which side goes first so that neither always follows the other's cache state.
    let t = [];
    let o;
    if (r % 2 === 0) {
      if (tsl) t = tesselBench(args.tessel, model, tsl, n, iterations, args.workers);
      o = await ort.run(iterations);
    } else {
      o = await ort.run(iterations);
      if (tsl) t = tesselBench(args.tessel, model, tsl, n, iterations, args.workers);
    }
    tesselMs.push(...t);
    ortMs.push(...o);
    // Each round's two medians were taken moments apart: their ratio cancels the machine's slower
    // and faster spells (shared hosts), which pooled medians do not.
    if (tsl) roundRatios.push(median(t) / median(o));
    process.stderr.write(`  ${model.name} ${n}t round ${r + 1}/${rounds}\r`);
  }
  ort.close();
  const row = {model: model.name, opset: model.opset, threads: n, iterations, ort_median_ms: median(ortMs),
               ort_min_ms: Math.min(...ortMs), ort_version: info.ort_version};
  if (tsl) {
    Object.assign(row, {tessel_median_ms: median(tesselMs), tessel_min_ms: Math.min(...tesselMs),
                        round_ratio: median(roundRatios)});
    row.ratio = row.tessel_median_ms / row.ort_median_ms;
  }
  rows.push(row);
  return row;
}

const fmt = (x, d = 2) => (x === undefined ? '-' : x.toFixed(d));

function printClassic(rows) {
  const pad = (s, w) => String(s).padStart(w);
  console.log(`\n| model        | threads | Tessel median ms | ORT ${rows[0].ort_version} median ms | Tessel / ORT | ` +
              `per-round ratio | Tessel min | ORT min |`);
  console.log('| ------------ | ------- | ---------------- | ----------------------- | ------------ | --------------- | ---------- | ------- |');
  for (const r of rows) {
    console.log(`| ${r.model.padEnd(12)} | ${pad(r.threads, 7)} | ${pad(fmt(r.tessel_median_ms), 16)} | ` +
                `${pad(fmt(r.ort_median_ms), 23)} | ${pad(fmt(r.ratio), 12)} | ${pad(fmt(r.round_ratio), 15)} | ` +
                `${pad(fmt(r.tessel_min_ms), 10)} | ${pad(fmt(r.ort_min_ms), 7)} |`);
  }
}

function printZoo(rows) {
  console.log(`\n| model | opset | threads | status | Tessel median ms | ORT ${rows[0].ort_version} median ms | ` +
              `Tessel / ORT | per-round | reference kernels (share of Tessel's per-op time) |`);
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of rows) {
    const refs = (r.reference_ms || []).map(([k, ms]) => `${k.slice(10)} ${(100 * ms / r.profile_total_ms).toFixed(1)}%`);
    console.log(`| ${r.model} | ${r.opset} | ${r.threads} | ${r.status} | ${fmt(r.tessel_median_ms, 3)} | ` +
                `${fmt(r.ort_median_ms, 3)} | ${fmt(r.ratio)} | ${fmt(r.round_ratio)} | ${refs.join(', ') || '-'} |`);
  }
  const ratios = rows.filter((r) => r.round_ratio !== undefined).map((r) => r.round_ratio);
  if (ratios.length) {
    const geo = Math.exp(ratios.reduce((s, x) => s + Math.log(x), 0) / ratios.length);
    console.log(`\ngeometric mean of the per-round ratios over ${ratios.length} models: ${geo.toFixed(2)}`);
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  fs.mkdirSync(args.work, {recursive: true});
  const threads = args.threads.split(',').map(Number);
  const zoo = Boolean(args.zoo);
  const models = zoo ? zooModels(args) : classicModels(args);
  const rows = [];
  console.log(`machine: ${os.cpus()[0].model}, ${os.cpus().length} logical CPUs, load ${os.loadavg()[0].toFixed(1)}; ` +
              `${args.rounds} rounds x ${args.iterations} runs per side, batch 1, fp32, Tessel workers ` +
              `${args.workers || 'adaptive'}`);
  for (const model of models) {
    const tsl = path.join(args.work, `${model.name}.tsl`);
    const built = compile(args.tessel, model, tsl);
    if (!built.ok && !zoo) throw new Error(`tessel compile ${model.onnx} failed: ${built.error}`);
    console.log(`${model.name}: ${built.ok ? `compiled ${model.compileFlags.join(' ') || '-O3'}; ${built.kernels}` :
                                             `tessel compile failed: ${built.error}`}`);
    for (const line of built.reference || []) console.log(`  reference kernel: ${line}`);
    const prof = built.ok && zoo ? profile(args.tessel, model, tsl) : null;
    for (const n of threads) {
      let row;
      try {
        row = await benchModel(args, model, n, built.ok ? tsl : null, rows);
      } catch (e) {
        if (!zoo) throw e;
        row = {model: model.name, opset: model.opset, threads: n, ort_version: ''};
        rows.push(row);
        built.error = built.error || e.message.trim().split('\n').pop();
      }
      row.status = built.ok && row.ratio !== undefined ? 'ok' : `${built.ok ? 'bench' : 'compile'}: ${built.error}`;
      if (prof) Object.assign(row, {profile_total_ms: prof.total, reference_ms: prof.reference});
      if (built.reference) row.reference_ops = built.reference;
    }
  }
  process.stderr.write('\n');
  if (zoo) {
    printZoo(rows);
  } else {
    printClassic(rows);
  }
  if (args.json) fs.writeFileSync(args.json, JSON.stringify(rows, null, 2) + '\n');
}

main().catch((e) => {
  console.error(`compare: ${e.message}`);
  process.exit(1);
});
