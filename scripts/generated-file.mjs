// The command line every generator shares: `node scripts/gen-X.mjs` writes its
// file, `--print` writes it to stdout (the staleness tests compare the two).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** When `metaUrl` is the script being run: generate, then print or write `out` (`label` in the message). */
export async function runGenerator(metaUrl, generate, out, label) {
  if (!process.argv[1] || fileURLToPath(metaUrl) !== process.argv[1]) return;
  const text = await generate();
  if (process.argv.includes('--print')) process.stdout.write(text);
  else {
    writeFileSync(out, text);
    console.log(`wrote ${label}`);
  }
}
