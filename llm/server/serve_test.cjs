// tessel serve against independent references: greedy completions from the OpenAI client (four at once,
// streamed and not) equal `tessel generate --temp 0` run one at a time; chat prompts are the ChatML
// rendering of the messages; bad requests get their HTTP status and an OpenAI error body and the server
// keeps serving (half-open clients included); a client that disconnects mid-stream frees its slot and KV
// blocks; a full queue is 503; resident memory does not grow with the number of requests.
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const assert = require('node:assert/strict');

const [bin, data, nodeModules] = process.argv.slice(2);
const { OpenAI } = require(path.join(nodeModules, 'openai'));
const model = path.join(data, 'model-f32.gguf');
const servers = [];
// What the test is doing, printed as it goes: a hang (Bazel's timeout) then names its step.
let currentStep = 'start';
function step(what) {
  currentStep = what;
  console.error(`[serve_test ${new Date().toISOString()}] ${what}`);
}
// Fails well inside Bazel's 300 s limit, naming the step that hung and killing the servers.
setTimeout(() => fail(`no result after 240 s; hung in: ${currentStep}`), 240000).unref();

function fail(msg) {
  console.error(`FAIL: ${msg}`);
  for (const s of servers) s.kill('SIGKILL');
  process.exit(1);
}

// Starts `tessel serve` on a free port; resolves with its base URL once it listens.
function startServer(extra) {
  step(`tessel serve ${extra.join(' ')}`);
  return new Promise((resolve, reject) => {
    // On glibc's default 4 KiB pages: the resident-memory check below counts kilobytes, and the tests'
    // GLIBC_TUNABLES (.bazelrc: 2 MiB pages for every malloc'd block) would make it count 2 MiB steps.
    const env = { ...process.env };
    delete env.GLIBC_TUNABLES;
    const p = spawn(bin, ['serve', '--model', model, '--port', '0', '--threads', '2', ...extra],
                    { stdio: ['ignore', 'ignore', 'pipe'], env });
    servers.push(p);
    let err = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${err}`)), 20000);
    p.stderr.on('data', (d) => {
      err += d;
      const m = err.match(/listening on (http:\/\/[0-9.]+:[0-9]+)/);
      if (m) { clearTimeout(timer); resolve({ url: m[1], proc: p, log: () => err }); }
    });
    p.on('exit', (code) => reject(new Error(`server exited with ${code}: ${err}`)));
  });
}

// The continuation `tessel generate --temp 0` prints after the prompt (before its speed line).
function generate(prompt, n) {
  step(`tessel generate -n ${n} '${prompt.split('\n')[0]}'`);
  const r = spawnSync(bin, ['generate', '--model', model, '--prompt', prompt, '-n', String(n), '--temp', '0',
                            '--threads', '2'], { encoding: 'utf8', timeout: 60000 });
  if (r.status !== 0) fail(`tessel generate (status ${r.status}, signal ${r.signal}): ${r.stderr}`);
  assert.ok(r.stdout.startsWith(prompt));
  const body = r.stdout.slice(prompt.length);
  return body.slice(0, body.lastIndexOf('\n', body.length - 2));
}

const chatMl = (messages) =>
  messages.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`).join('') + '<|im_start|>assistant\n';

async function raw(url, method, body, headers = { 'Content-Type': 'application/json' }) {
  const r = await fetch(url, { method, body, headers });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch (e) { fail(`${method} ${url}: body is not JSON: ${text}`); }
  return { status: r.status, json };
}

async function expectError(base, pathName, body, status, type, needle) {
  const r = await raw(base + pathName, 'POST', body);
  assert.equal(r.status, status, `${body}: status ${r.status} ${JSON.stringify(r.json)}`);
  assert.equal(r.json.error.type, type, JSON.stringify(r.json));
  assert.ok(r.json.error.message.includes(needle), `'${r.json.error.message}' lacks '${needle}'`);
}

async function health(base) { return (await raw(base + '/health', 'GET')).json; }

async function main() {
  // The command line: help, and startup errors are one line and exit status 1.
  step('tessel serve --help and startup errors');
  const help = spawnSync(bin, ['serve', '--help'], { encoding: 'utf8', timeout: 20000 });
  assert.ok(help.status === 0 && help.stdout.includes('--parallel') && help.stdout.includes('--chat-template'));
  for (const [args, needle] of [[['--model', '/nonexistent.gguf'], 'nonexistent'],
                                [['--model', model, '--ctx', '100000'], "exceeds the model's context length"],
                                [['--model', model, '--parallel', '0'], '--parallel'],
                                [['--model', model, '--chat-template', '/nonexistent.jinja'], '--chat-template']]) {
    const r = spawnSync(bin, ['serve', ...args, '--port', '0'], { encoding: 'utf8', timeout: 20000 });
    assert.equal(r.status, 1, `serve ${args.join(' ')}: exit ${r.status}`);
    assert.ok(r.stderr.includes(needle), `serve ${args.join(' ')}: '${r.stderr}' lacks '${needle}'`);
  }

  const prompts = ['ROMEO:', 'JULIET:\nO Romeo', 'First Citizen:\nBefore we proceed', 'KING'];
  const want = prompts.map((p) => generate(p, 24));
  for (const w of want) assert.ok(w.length > 20, `reference too short: '${w}'`);

  const s = await startServer(['--parallel', '4', '--ctx', '256']);
  const client = new OpenAI({ baseURL: s.url + '/v1', apiKey: 'none', maxRetries: 0 });

  // Four greedy completions at once (batched decode) equal four sequential `tessel generate` runs.
  step('four completions at once');
  const got = await Promise.all(prompts.map((p) =>
    client.completions.create({ model: 'm', prompt: p, max_tokens: 24, temperature: 0 })));
  got.forEach((g, i) => {
    assert.equal(g.choices[0].text, want[i], `completion of '${prompts[i]}'`);
    assert.equal(g.choices[0].finish_reason, 'length');
    assert.equal(g.usage.completion_tokens, 24);
  });
  // A longer non-streaming completion goes out chunked, whitespace first: the client still reads it.
  const longWant = generate(prompts[0], 120);
  const long = await client.completions.create({ model: 'm', prompt: prompts[0], max_tokens: 120, temperature: 0 });
  assert.equal(long.choices[0].text, longWant);
  assert.equal(long.usage.completion_tokens, 120);
  // Streamed: the chunks add up to the same text.
  step('streamed completion');
  let streamed = '';
  for await (const c of await client.completions.create({ model: 'm', prompt: prompts[1], max_tokens: 24,
                                                          temperature: 0, stream: true })) {
    streamed += c.choices[0].text;
  }
  assert.equal(streamed, want[1]);

  step('chat');
  // Chat, with and without streaming: the continuation of the ChatML rendering of the messages.
  const messages = [{ role: 'system', content: 'You speak verse.' }, { role: 'user', content: 'ROMEO:' }];
  const chatWant = generate(chatMl(messages), 16);
  const chat = await client.chat.completions.create({ model: 'm', messages, max_tokens: 16, temperature: 0 });
  assert.equal(chat.choices[0].message.role, 'assistant');
  assert.equal(chat.choices[0].message.content, chatWant);
  assert.equal(chat.object, 'chat.completion');
  let chatStreamed = '';
  let last = null;
  const stream = await client.chat.completions.create({ model: 'm', messages, max_tokens: 16, temperature: 0,
                                                        stream: true, stream_options: { include_usage: true } });
  for await (const c of stream) {
    if (c.choices.length) { chatStreamed += c.choices[0].delta.content || ''; if (c.choices[0].finish_reason) last = c; }
    if (c.usage) assert.equal(c.usage.completion_tokens, 16);
  }
  assert.equal(chatStreamed, chatWant);
  assert.equal(last.choices[0].finish_reason, 'length');
  // Seeded sampling repeats.
  const sampled = () => client.completions.create({ model: 'm', prompt: 'ROMEO:', max_tokens: 20, temperature: 1,
                                                    top_p: 0.9, top_k: 40, seed: 7 });
  assert.equal((await sampled()).choices[0].text, (await sampled()).choices[0].text);
  // Stop strings end the text before them.
  const cut = want[0].indexOf(want[0].trim().split(/\s+/)[1]);
  const stopped = await client.completions.create({ model: 'm', prompt: prompts[0], max_tokens: 24, temperature: 0,
                                                    stop: [want[0].slice(cut, cut + 3)] });
  assert.equal(stopped.choices[0].text, want[0].slice(0, cut));
  assert.equal(stopped.choices[0].finish_reason, 'stop');

  // Models, tokenize / detokenize.
  const models = await client.models.list();
  assert.equal(models.data[0].id, 'model-f32.gguf');
  const tok = await raw(s.url + '/tokenize', 'POST', JSON.stringify({ content: 'ROMEO: hi' }));
  assert.ok(tok.json.tokens.length > 0);
  const detok = await raw(s.url + '/detokenize', 'POST', JSON.stringify({ tokens: tok.json.tokens }));
  assert.equal(detok.json.content, 'ROMEO: hi');

  step('bad requests');
  // Bad requests: status, error type, a message that says what was wrong.
  const c = '/v1/completions';
  await expectError(s.url, c, '{"prompt": "x",', 400, 'invalid_request_error', 'not valid JSON');
  await expectError(s.url, c, '[1, 2]', 400, 'invalid_request_error', 'JSON object');
  await expectError(s.url, c, '{"prompt": 5}', 400, 'invalid_request_error', "'prompt' must be a string");
  await expectError(s.url, c, '{"prompt": "x", "max_tokens": "9"}', 400, 'invalid_request_error', "'max_tokens'");
  await expectError(s.url, c, '{"prompt": "x", "temperature": 9}', 400, 'invalid_request_error', "'temperature'");
  await expectError(s.url, c, '{"prompt": "x", "bogus": 1}', 400, 'invalid_request_error', "unknown field 'bogus'");
  await expectError(s.url, c, '{"prompt": "x", "n": 2}', 400, 'invalid_request_error', "'n' must be 1");
  await expectError(s.url, c, '{"prompt": "x", "max_tokens": 1000000}', 400, 'invalid_request_error', 'exceed the context');
  await expectError(s.url, c, '{"prompt": "x", "max_tokens": 18446744073709551615}', 400, 'invalid_request_error',
                    'exceed the context');
  await expectError(s.url, c, JSON.stringify({ prompt: 'word '.repeat(400) }), 400, 'invalid_request_error',
                    'the context holds 256');
  await expectError(s.url, c, Buffer.from('{"prompt": "\xff\xfe"}', 'latin1'), 400, 'invalid_request_error', 'UTF-8');
  await expectError(s.url, '/v1/chat/completions', '{"messages": []}', 400, 'invalid_request_error', "'messages'");
  await expectError(s.url, '/v1/chat/completions', '{"messages": [{"role": "robot", "content": "x"}]}', 400,
                    'invalid_request_error', 'role');
  await expectError(s.url, '/detokenize', '{"tokens": [1, 99999]}', 400, 'invalid_request_error', 'vocabulary');
  const notFound = await raw(s.url + '/v2/nothing', 'POST', '{}');
  assert.equal(notFound.status, 404);
  assert.equal(notFound.json.error.type, 'not_found_error');

  step('client leaving mid-stream');
  // A client that leaves mid-stream: its slot and KV blocks come back. A raw socket closed after the
  // first streamed token (the OpenAI client's AbortController left its stream iterator pending forever
  // on a loaded machine, Node 20 and openai 6.30, although the server had already freed the request).
  const streamCancelledBefore = (await health(s.url)).requests_cancelled;
  const streamBody = JSON.stringify({ prompt: 'ROMEO:', max_tokens: 200, temperature: 0, stream: true });
  const streamer = net.connect(Number(new URL(s.url).port), '127.0.0.1');
  await new Promise((resolve, reject) => {
    let seen = '';
    streamer.on('error', reject);
    streamer.on('connect', () => streamer.write(
      `POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(streamBody)}\r\n\r\n${streamBody}`));
    streamer.on('data', (d) => {
      seen += d;
      if (/"text":"[^"]/.test(seen)) { streamer.destroy(); resolve(); }
    });
    streamer.on('end', () => reject(new Error(`stream ended before its first token: ${seen}`)));
  });
  let h = await health(s.url);
  // Free blocks and those of the kept prefix (the last finished request's prompt) make up the pool.
  const idle = (x) => x.slots_processing === 0 && x.kv_blocks_free + x.kv_blocks_cached === x.kv_blocks_total;
  for (let i = 0; i < 100 && !(idle(h) && h.requests_cancelled > streamCancelledBefore); ++i) {
    await new Promise((r) => setTimeout(r, 50));
    h = await health(s.url);
  }
  assert.ok(idle(h) && h.requests_cancelled === streamCancelledBefore + 1, JSON.stringify(h));
  assert.equal(h.status, 'ok');

  step('client leaving a non-streaming request');
  // A client that leaves a non-streaming request: the request is cancelled, not run to its max_tokens.
  const cancelledBefore = h.requests_cancelled;
  const leaveBody = JSON.stringify({ prompt: 'ROMEO:', max_tokens: 240, temperature: 0 });
  const leaver = net.connect(Number(new URL(s.url).port), '127.0.0.1');
  await new Promise((r) => leaver.on('connect', r));
  leaver.write(`POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
               `Content-Length: ${Buffer.byteLength(leaveBody)}\r\n\r\n${leaveBody}`);
  leaver.destroy();
  for (let i = 0; i < 100 && !(idle(h) && h.requests_cancelled > cancelledBefore); ++i) {
    await new Promise((r) => setTimeout(r, 50));
    h = await health(s.url);
  }
  assert.ok(idle(h) && h.requests_cancelled === cancelledBefore + 1, JSON.stringify(h));

  step('half-open clients');
  // Half-open clients (headers promising a body that never comes, and a bare connection) do not stop the
  // others from being served.
  const halfOpen = [net.connect(Number(new URL(s.url).port), '127.0.0.1'), net.connect(Number(new URL(s.url).port), '127.0.0.1')];
  halfOpen[0].write('POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"prompt": ');
  const during = await client.completions.create({ model: 'm', prompt: prompts[3], max_tokens: 24, temperature: 0 });
  assert.equal(during.choices[0].text, want[3]);
  for (const sock of halfOpen) sock.destroy();

  step('resident memory over many requests');
  // Memory is planned at start: resident memory after a few hundred more requests is what it was after
  // the first ones (a per-request leak of even a few KB would show).
  const rss = () => Number(fs.readFileSync(`/proc/${s.proc.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]);
  const burst = async (count) => {
    for (let i = 0; i < count; i += 4) {
      await Promise.all([0, 1, 2, 3].map((k) => client.completions.create({
        model: 'm', prompt: `${prompts[k]} ${i}`, max_tokens: 4, temperature: 0.7, seed: i + k })));
    }
  };
  await burst(100);
  const before = rss();
  await burst(400);
  const after = rss();
  console.log(`resident memory: ${before} kB after 100 requests, ${after} kB after 500`);
  assert.ok(after - before < 2048, `resident memory grew by ${after - before} kB over 400 requests`);

  // --chat-template overrides the model's: the prompt is this template's rendering.
  const templateFile = path.join(process.env.TEST_TMPDIR || '/tmp', 'plain_chat.jinja');
  fs.writeFileSync(templateFile, "{% for m in messages %}{{ m['role'] | upper }}: {{ m['content'] }}\n{% endfor %}" +
                                 "{% if add_generation_prompt %}ASSISTANT:{% endif %}");
  const custom = await startServer(['--parallel', '1', '--ctx', '256', '--chat-template', templateFile]);
  const customClient = new OpenAI({ baseURL: custom.url + '/v1', apiKey: 'none', maxRetries: 0 });
  const plain = await customClient.chat.completions.create({ model: 'm', messages, max_tokens: 16, temperature: 0 });
  assert.equal(plain.choices[0].message.content, generate('SYSTEM: You speak verse.\nUSER: ROMEO:\nASSISTANT:', 16));

  step('full queue');
  // One slot and a queue of one: of six long requests at once, some are refused with 503 and a JSON
  // error; the others complete.
  const small = await startServer(['--parallel', '1', '--queue', '1', '--ctx', '256']);
  const body = JSON.stringify({ prompt: 'ROMEO:', max_tokens: 240, temperature: 0 });
  const results = await Promise.all(Array.from({ length: 6 }, () => raw(small.url + c, 'POST', body)));
  const refused = results.filter((r) => r.status === 503);
  assert.ok(refused.length >= 1, `statuses: ${results.map((r) => r.status)}`);
  for (const r of refused) assert.equal(r.json.error.type, 'unavailable_error');
  for (const r of results.filter((r) => r.status !== 503)) assert.equal(r.status, 200);

  for (const p of servers) p.kill('SIGTERM');
  console.log('PASS: tessel serve');
}

main().catch((e) => fail(e.stack || e));
