// The peer of the tokenizer benchmark: Hugging Face tokenizers (Rust, Node binding) encoding
// the same texts with the same tokenizer.json, XTTS style ("[en]" + text with spaces as
// [SPACE]), lowercased as XTTS's preprocessing does. Prints seconds for sequential encode()
// calls and for one encodeBatch() (which runs on every core).
// usage: NODE_PATH=tests/golden/node_modules node bench_tokenize_peer.js tokenizer.json metadata.csv
//    or: ... bench_tokenize_peer.js tokenizer.json --check tokens.tsv
// The second form checks an xtts-tokenize bpe output: every record's ids must equal HF's
// ids for "[lang]" + its sixth column with spaces as [SPACE].
const fs = require('fs');
const { Tokenizer } = require('tokenizers');

async function check(tok, path) {
  const rows = fs.readFileSync(path, 'utf8').split('\n').slice(1).filter((l) => l).map((l) => l.split('\t'));
  let bad = 0;
  for (const r of rows) {
    const text = '[' + r[2] + ']' + r[5].replace(/ /g, '[SPACE]');
    const ids = (await tok.encode(text, null, { addSpecialTokens: false })).getIds().join(' ');
    if (ids !== r[4]) bad++;
  }
  console.log(`check_rows=${rows.length} check_differ=${bad}`);
  if (bad) process.exit(1);
}

async function main() {
  const [vocab, meta, extra] = process.argv.slice(2);
  const tok = Tokenizer.fromFile(vocab);
  if (meta === '--check') return check(tok, extra);
  const texts = fs.readFileSync(meta, 'utf8').split('\n').filter((l) => l).map((l) => {
    const f = l.split('|');
    return '[en]' + (f[2] || f[1]).toLowerCase().replace(/ /g, '[SPACE]');
  });
  let t0 = process.hrtime.bigint();
  let n = 0;
  for (const t of texts) n += (await tok.encode(t, null, { addSpecialTokens: false })).getIds().length;
  const seq = Number(process.hrtime.bigint() - t0) / 1e9;
  t0 = process.hrtime.bigint();
  const encs = await tok.encodeBatch(texts, { addSpecialTokens: false });
  const batch = Number(process.hrtime.bigint() - t0) / 1e9;
  let m = 0;
  for (const e of encs) m += e.getIds().length;
  console.log(`peer_lines=${texts.length} peer_ids=${n} peer_seq_s=${seq.toFixed(3)} peer_batch_s=${batch.toFixed(3)} peer_batch_ids=${m}`);
}
main().catch((e) => { console.error(e); process.exit(1); });
