// Writes bpe_golden.tsv: the ids Hugging Face's tokenizers library (the Rust code, through
// its Node binding: `npm install tokenizers` in this folder) gives for every line of
// bpe_lines.txt with each tokenizer.json here. tests/test_bpe.c checks xtts-prep's BPE
// against this file. Lines: "<vocab file>\t<line index>\t<ids space separated>".
// Run: cd tests/golden && npm install --no-save tokenizers && node make_bpe_golden.js
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require('tokenizers');

function unescape(s) {
  return s.replace(/\\(.)/g, (m, c) => ({ t: '\t', n: '\n', r: '\r', '\\': '\\' })[c] ?? m);
}

async function main() {
  const here = __dirname;
  const lines = fs.readFileSync(path.join(here, 'bpe_lines.txt'), 'utf8').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const out = [];
  for (const vocab of ['bpe_xtts.json', 'bpe_bytelevel.json', 'bpe_repeat.json']) {
    const tok = Tokenizer.fromFile(path.join(here, vocab));
    for (let i = 0; i < lines.length; i++) {
      const enc = await tok.encode(unescape(lines[i]), null, { addSpecialTokens: false });
      out.push(`${vocab}\t${i}\t${enc.getIds().join(' ')}`);
    }
  }
  fs.writeFileSync(path.join(here, 'bpe_golden.tsv'), out.join('\n') + '\n');
  console.log(`bpe_golden.tsv: ${out.length} lines`);
}

main().catch((e) => { console.error(e); process.exit(1); });
