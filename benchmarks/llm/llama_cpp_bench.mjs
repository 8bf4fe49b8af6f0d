// llama.cpp's side of benchmarks/llm/run.sh, through node-llama-cpp's prebuilt CPU binaries (offline):
// prefill of a prompt of N tokens, then greedy decode of M tokens, on a fresh sequence each time.
// Usage: node llama_cpp_bench.mjs MODEL.gguf THREADS PROMPT_TOKENS DECODE_TOKENS [CONTEXT]
// CONTEXT (default 512) is the context and batch size.
// Prints one JSON line: {"prefill_tokens", "prefill_tok_s", "decode_tokens", "decode_tok_s", "cpu"}.
import path from "node:path";
import {createRequire} from "node:module";

const [modelPath, threadsArg, promptArg, decodeArg, contextArg] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../../third_party/npm/node_modules");
const {getLlama, LlamaLogLevel} = await import(path.join(root, "node-llama-cpp/dist/index.js"));

const threads = Number(threadsArg), promptTokens = Number(promptArg), decodeTokens = Number(decodeArg);
const contextSize = Number(contextArg || 512);
const llama = await getLlama({gpu: false, build: "never", usePrebuiltBinaries: true, skipDownload: true,
                              progressLogs: false, logLevel: LlamaLogLevel.error, maxThreads: threads});
const model = await llama.loadModel({modelPath, gpuLayers: 0, useMmap: true});
const context = await model.createContext({contextSize, batchSize: contextSize, threads, sequences: 1});
const sequence = context.getSequence();
// The same prompt text as Tessel's side: single-letter words, one token each, plus BOS.
const letters = "abcdefghijklmnopqrstuvwxyz";
const words = [];
for (let i = 0; i < promptTokens - 1; ++i) words.push(letters[i % 26]);
const tokens = [model.tokens.bos, ...model.tokenize(words.join(" "))];

const now = () => Number(process.hrtime.bigint()) / 1e9;
let t0 = now();
await sequence.evaluateWithoutGeneratingNewTokens(tokens);
const prefill = now() - t0;
// Decode: the first generated token comes from the prompt's logits; time the steps after it.
let n = 0, tFirst = 0;
for await (const token of sequence.evaluate([tokens[tokens.length - 1]], {temperature: 0})) {
  if (n === 0) tFirst = now();
  if (++n > decodeTokens) break;
}
const decode = now() - tFirst;
console.log(JSON.stringify({prefill_tokens: tokens.length, prefill_tok_s: tokens.length / prefill,
                            decode_tokens: n - 1, decode_tok_s: (n - 1) / decode}));
await context.dispose();
await model.dispose();
