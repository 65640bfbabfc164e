// Reading the CLI's input: files or standard input, bounded in depth. A file
// that cannot be read is exit status 2 (like a usage error), never a stack trace.
import { readFileSync, statSync } from 'node:fs';
import { fetchHubConfig, type HubRef } from '../frontend/config/hub.js';

/** Input that cannot be read at all (missing file, a directory): exit 2, like a usage error. */
export class UnreadableError extends Error {}

/** Config v1 nests three levels (model.moe.experts); anything far deeper is not a config. */
export const MAX_JSON_DEPTH = 64;

/** The nesting depth of a parsed JSON value, without recursion (a deep value must not overflow the stack). */
export function jsonDepth(value: unknown, limit = Infinity): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d + 1 > deepest) deepest = d + 1;
    if (deepest > limit) return deepest;
    for (const child of Object.values(v as object)) stack.push([child, d + 1]);
  }
  return deepest;
}

/** The largest input read: configs are kilobytes (a Hugging Face config.json well under 1 MiB). */
export const MAX_INPUT_BYTES = 8 * 2 ** 20;

export function readText(arg: string): string {
  const name = arg === '-' ? 'standard input' : arg;
  try {
    if (arg !== '-' && statSync(arg).size > MAX_INPUT_BYTES)
      throw new UnreadableError(tooLarge(name, statSync(arg).size));
    const text = arg === '-' ? readFileSync(0, 'utf8') : readFileSync(arg, 'utf8');
    if (text.length > MAX_INPUT_BYTES) throw new UnreadableError(tooLarge(name, text.length));
    return text;
  } catch (e) {
    if (e instanceof UnreadableError) throw e;
    const err = e as NodeJS.ErrnoException;
    const why = err.code === 'EISDIR' ? 'it is a directory' : err.code === 'ENOENT' ? 'no such file' : err.message;
    throw new UnreadableError(`cannot read ${arg === '-' ? 'standard input' : arg}: ${why}`);
  }
}

const tooLarge = (name: string, bytes: number) =>
  `cannot read ${name}: ${(bytes / 2 ** 20).toFixed(1)} MiB is larger than any config (llmem reads at most ${MAX_INPUT_BYTES / 2 ** 20} MiB)`;

/**
 * `--hf org/name[@revision]`: the model's config.json from the Hugging Face Hub.
 * HF_TOKEN, when set, is sent for gated and private models; LLMEM_HUB_URL
 * replaces https://huggingface.co (the tests' local server). Any failure
 * (offline, 401/403, 404, another status) is unreadable input: exit 2.
 */
export async function readHubConfig(ref: HubRef): Promise<string> {
  const r = await fetchHubConfig(ref, {
    fetch: globalThis.fetch,
    token: process.env.HF_TOKEN,
    base: process.env.LLMEM_HUB_URL || undefined,
    audience: 'cli',
  });
  if (!r.ok) throw new UnreadableError(`--hf ${ref.key.replace(/@main$/, '')}: ${r.message}`);
  return r.text;
}
