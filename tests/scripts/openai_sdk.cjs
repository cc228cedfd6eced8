// The official OpenAI SDK for Node against the server: models, completions (seeded,
// streamed, with logprobs and stop strings), chat (streamed, with text parts and logprobs), and an
// error status.
const OpenAI = require('openai');
const port = process.argv[2];
const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'not-needed' });
let passed = 0, failed = 0;
const check = (cond, what) => { if (cond) passed++; else { failed++; console.log('FAIL:', what); } };

(async () => {
  const models = await client.models.list();
  check(models.data.some((m) => m.id === 'shakespeare'), 'models.list names the dataset');
  const req = { model: 'shakespeare', prompt: 'ROMEO:', max_tokens: 30, temperature: 0.8, seed: 7 };
  const r = await client.completions.create(req);
  const text = r.choices[0].text;
  check(text.length === 30 && r.choices[0].finish_reason === 'length', `completion: ${JSON.stringify(r.choices[0])}`);
  const r2 = await client.completions.create(req);
  check(r2.choices[0].text === text, 'the same seed gives the same text');
  const stream = await client.completions.create({ ...req, stream: true });
  let streamed = '';
  for await (const chunk of stream) streamed += chunk.choices[0].text;
  check(streamed === text, `streaming gives the same text (${JSON.stringify(streamed)})`);
  const lp = await client.completions.create({ ...req, max_tokens: 5, logprobs: 3 });
  const l = lp.choices[0].logprobs;
  check(l.tokens.length === 5 && l.token_logprobs.length === 5 && l.top_logprobs.length === 5, 'logprobs');
  const st = await client.completions.create({ ...req, max_tokens: 200, stop: ['e', 'a'] });
  check(!/[ea]/.test(st.choices[0].text) && st.choices[0].finish_reason === 'stop', `stop: ${JSON.stringify(st.choices[0])}`);
  const chat = await client.chat.completions.create({
    model: 'shakespeare', messages: [{ role: 'user', content: 'Speak, speak.' }], max_tokens: 12, seed: 1,
  });
  check(chat.choices[0].message.role === 'assistant' && chat.choices[0].message.content.length === 12, 'chat');
  const cs = await client.chat.completions.create({
    model: 'shakespeare', messages: [{ role: 'user', content: 'Speak, speak.' }], max_tokens: 12, seed: 1, stream: true,
  });
  let content = '';
  for await (const chunk of cs) content += chunk.choices[0].delta.content || '';
  check(content === chat.choices[0].message.content, 'chat streaming');
  const cl = await client.chat.completions.create({
    model: 'shakespeare', messages: [{ role: 'user', content: [{ type: 'text', text: 'Speak, speak.' }] }],
    max_completion_tokens: 12, seed: 1, logprobs: true, top_logprobs: 2,
  });
  const entries = cl.choices[0].logprobs.content;
  check(cl.choices[0].message.content === chat.choices[0].message.content &&
        entries.map((e) => e.token).join('') === cl.choices[0].message.content &&
        entries.every((e) => e.top_logprobs.length <= 2 && e.bytes.length >= 1),
        `chat with text parts, max_completion_tokens and logprobs: ${JSON.stringify(cl.choices[0])}`);
  try {
    await client.completions.create({ model: 'no-such-dataset', prompt: 'x' });
    check(false, 'an unknown model is an error');
  } catch (e) {
    check(e.status === 404, `unknown model gives 404 (${e.status})`);
  }
  console.log(`openai-sdk: ${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})().catch((e) => { console.log('FAIL:', e); console.log(`openai-sdk: ${passed} passed, ${failed + 1} failed`); process.exit(1); });
