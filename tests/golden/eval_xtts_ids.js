// Compares the ids of an xtts-tokenize token stream with those Hugging Face's tokenizers
// library (Rust, through its Node binding) gives for the same normalized text on the same
// vocabulary, formatted as XTTS's VoiceBpeTokenizer.encode does ("[lang]" + text with every
// space as "[SPACE]"), and prints per-language agreement. Used by eval_xtts_ids.sh.
// Usage: node eval_xtts_ids.js TOKENS.tsv VOCAB.json [REJECTS.tsv]
const fs = require('fs');
const { Tokenizer } = require('tokenizers');

const unescape = (s) => s.replace(/\\(.)/g, (m, c) => ({ t: '\t', n: '\n', r: '\r', '\\': '\\' })[c] ?? m);

async function main() {
  const [tokensPath, vocabPath, rejectsPath] = process.argv.slice(2);
  const tok = Tokenizer.fromFile(vocabPath);
  const lines = fs.readFileSync(tokensPath, 'utf8').split('\n').filter((l) => l);
  const header = Object.fromEntries(lines[0].split('\t').slice(1).map((kv) => kv.split('=')));
  const unk = Number(header.unk_id ?? -1);
  const stats = new Map();
  const get = (l) => stats.get(l) ?? (stats.set(l, { n: 0, equal: 0, unk: 0, rejected: 0 }), stats.get(l));
  const diffs = [];
  for (const line of lines.slice(1)) {
    const f = line.split('\t');
    const lang = f[2], ids = f[4], text = unescape(f[5]);
    const enc = await tok.encode(`[${lang}]${text}`.replace(/ /g, '[SPACE]'), null, { addSpecialTokens: false });
    const want = enc.getIds().join(' ');
    const s = get(lang);
    s.n++;
    if (want === ids) s.equal++;
    else if (diffs.length < 10) diffs.push(`${f[0]} ${lang} '${text}'\n  ours ${ids}\n  HF   ${want}`);
    if (ids.split(' ').map(Number).includes(unk)) s.unk++;
  }
  if (rejectsPath && fs.existsSync(rejectsPath))
    for (const r of fs.readFileSync(rejectsPath, 'utf8').split('\n').filter((l) => l)) get(r.split('_')[0]).rejected++;
  console.log(`normalize=${header.normalize} vocab=${header.vocab_hash}`);
  console.log('lang     written  ids=HF  with[UNK]  rejected');
  let tn = 0, te = 0;
  for (const [l, s] of [...stats.entries()].sort()) {
    console.log(`${l.padEnd(8)} ${String(s.n).padStart(7)} ${String(s.equal).padStart(7)} ${String(s.unk).padStart(10)} ${String(s.rejected).padStart(9)}`);
    tn += s.n; te += s.equal;
  }
  console.log(`all      ${String(tn).padStart(7)} ${String(te).padStart(7)}  (${tn ? ((100 * te) / tn).toFixed(1) : '0'} % of written records have HF's ids)`);
  for (const d of diffs) console.log(d);
  process.exit(te === tn ? 0 : 1);
}

main().catch((e) => { console.error(e); process.exit(2); });
