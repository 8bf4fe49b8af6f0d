// Load generator for OpenAI-compatible servers (tessel serve, llama-server): N concurrent clients each
// stream chat completions back to back; per level prints, one JSON line per level: the completion tokens
// over the level's wall time (prefill included), the aggregate decode tokens/s (each request's tokens
// after its first over the time after its first, averaged, times the clients: the decode rate the
// clients see together) and the time to first token's p50 / p99.
//   node serve_bench.mjs --url http://127.0.0.1:8080 --clients 1,2,4,8 --requests 3 --max-tokens 64 --name tessel
const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1]]);
  return acc;
}, []));
const url = args.url;
const levels = (args.clients || '1,2,4,8').split(',').map(Number);
const requests = Number(args.requests || 3);
const maxTokens = Number(args['max-tokens'] || 64);
const name = args.name || 'server';

function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
}

// One streamed request: time to the first content, completion tokens (from usage when the server sends
// it, else one per content chunk).
async function one(i) {
  const body = {
    model: 'm', max_tokens: maxTokens, temperature: 0, stream: true, stream_options: { include_usage: true },
    messages: [{ role: 'user', content: `Tell me story number ${i} about a cat.` }],
  };
  const t0 = performance.now();
  const r = await fetch(url + '/v1/chat/completions', {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${await r.text()}`);
  let ttft = null, chunks = 0, usage = null, buf = '';
  const decoder = new TextDecoder();
  for await (const part of r.body) {
    buf += decoder.decode(part, { stream: true });
    let k;
    while ((k = buf.indexOf('\n\n')) >= 0) {
      const ev = buf.slice(0, k);
      buf = buf.slice(k + 2);
      if (!ev.startsWith('data: ') || ev === 'data: [DONE]') continue;
      const j = JSON.parse(ev.slice(6));
      if (j.usage) usage = j.usage;
      const c = j.choices && j.choices[0] && j.choices[0].delta && j.choices[0].delta.content;
      if (c) {
        if (ttft === null) ttft = performance.now() - t0;
        ++chunks;
      }
    }
  }
  return { ttft, tokens: usage ? usage.completion_tokens : chunks, ms: performance.now() - t0 };
}

for (const clients of levels) {
  const t0 = performance.now();
  const results = [];
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    for (let k = 0; k < requests; ++k) results.push(await one(c * 100 + k));
  }));
  const wall = (performance.now() - t0) / 1000;
  const tokens = results.reduce((s, r) => s + r.tokens, 0);
  const ttfts = results.map((r) => r.ttft);
  const decode = results.filter((r) => r.tokens > 1).map((r) => (r.tokens - 1) / ((r.ms - r.ttft) / 1000));
  const meanDecode = decode.reduce((s, x) => s + x, 0) / Math.max(1, decode.length);
  console.log(JSON.stringify({
    server: name, clients, requests: results.length, completion_tokens: tokens,
    tokens_per_s_with_prefill: +(tokens / wall).toFixed(1),
    aggregate_tokens_per_s: +(clients * meanDecode).toFixed(1),
    ttft_p50_ms: +percentile(ttfts, 0.5).toFixed(1), ttft_p99_ms: +percentile(ttfts, 0.99).toFixed(1),
  }));
}
