// Writes xtts_vocab_golden.tsv: the ids Hugging Face's tokenizers library (the Rust code,
// through its Node binding) gives on XTTS's real vocabulary for every sentence of
// xtts_sentences.tsv, lowercased and formatted as XTTS's VoiceBpeTokenizer.encode does:
// "[lang]" + text with every space as "[SPACE]" (zh as zh-cn). Languages the vocabulary
// has no [lang] token for are left out. tests/test_bpe.c checks xtts-prep's ids against it.
//
// The vocabulary is coqui-ai/TTS's tests/inputs/xtts_vocab.json (not committed; its
// SHA-256 heads the output). Put it at tests/golden/xtts_vocab.json or name it in
// XTTS_VOCAB, e.g. from a bare clone of coqui-ai/TTS:
//   git --git-dir=TTS.git show HEAD:tests/inputs/xtts_vocab.json > tests/golden/xtts_vocab.json
// Run: cd tests/golden && npm install --no-save tokenizers && node make_xtts_vocab_golden.js
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const { Tokenizer } = require('tokenizers');

async function main() {
  const here = __dirname;
  const vocab = process.env.XTTS_VOCAB || path.join(here, 'xtts_vocab.json');
  const bytes = fs.readFileSync(vocab);
  const tok = Tokenizer.fromFile(vocab);
  const has = new Set(Object.keys(JSON.parse(bytes.toString('utf8')).added_tokens.reduce((o, t) => (o[t.content] = 1, o), {})));
  const rows = fs.readFileSync(path.join(here, 'xtts_sentences.tsv'), 'utf8').split('\n').filter((l) => l);
  const out = [`#vocab\tsha256:${crypto.createHash('sha256').update(bytes).digest('hex')}`];
  for (const row of rows) {
    const [lang, raw] = row.split('\t');
    const code = lang === 'zh' ? 'zh-cn' : lang;
    if (!has.has(`[${code}]`)) continue;
    const text = raw.toLowerCase();
    const enc = await tok.encode(`[${code}]${text}`.replace(/ /g, '[SPACE]'), null, { addSpecialTokens: false });
    out.push(`${code}\t${text}\t${enc.getIds().join(' ')}`);
  }
  fs.writeFileSync(path.join(here, 'xtts_vocab_golden.tsv'), out.join('\n') + '\n');
  console.log(`xtts_vocab_golden.tsv: ${out.length - 1} sentences`);
}

main().catch((e) => { console.error(e); process.exit(1); });
