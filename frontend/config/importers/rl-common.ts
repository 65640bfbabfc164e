// What the RL importers (TRL, verl, OpenRLHF) share: the second models' shapes
// (reward model, critic) from a model id, the long flags of a launch script, and
// the world size a file does not give.
import type { Json } from '../../../wasm/llmem.js';
import { type Draft, ImportError, modelEntryForId, str } from './common.js';
import { runShell, type ShellRun } from './shell.js';

/** The world size assumed when neither the file nor the caller gives it: llmem's default. */
export const DEFAULT_WORLD = 8;

/**
 * A reward model or critic named by id (rl.reward.*, rl.critic.*): a catalog model sets its
 * layers, hidden size, heads, K/V heads and FFN size; the actor's own model, or an id the catalog
 * does not know, leaves them null (the actor's shape), the latter reported.
 */
export function applySecondModel(d: Draft, role: 'reward' | 'critic', key: string, id: Json | undefined): void {
  if (id === undefined || id === null) return;
  const name = str(id, key);
  const entry = modelEntryForId(name);
  const actor = d.get('model.preset');
  if (!entry) {
    d.skip(
      key,
      `"${name}" is not in the model catalog: the ${role} model is counted with the actor's shape (set rl.${role}.layers, hidden, heads, kv_heads, ffn_hidden)`,
    );
    return;
  }
  if (typeof actor === 'string' && actor.split('@')[0] === entry.id) {
    d.note(`${key} "${name}": the actor's shape (${entry.id})`);
    return;
  }
  const m = entry.model as Record<string, Json>;
  for (const [k, path] of [
    ['layers', 'layers'],
    ['hidden', 'hidden'],
    ['heads', 'heads'],
    ['kv_heads', 'kv_heads'],
    ['ffn_hidden', 'ffn_hidden'],
  ] as const)
    if (typeof m[k] === 'number') d.set(`rl.${role}.${path}`, m[k]);
  d.note(
    `${key} "${name}": the ${role} model has ${entry.id}'s layers, hidden size, heads and FFN size, with a scalar head`,
  );
}

export type Flags = Map<string, string[]>;

/** `--name value ...` and `--name=value` words into a map, a later flag winning. */
export function parseFlags(words: string[], into: Flags = new Map()): Flags {
  let current: string[] | undefined;
  for (const w of words) {
    const m = /^--([A-Za-z][\w.-]*)(?:=(.*))?$/s.exec(w);
    if (m) {
      current = m[2] !== undefined ? [m[2]] : [];
      into.set(m[1], current);
      if (m[2] !== undefined) current = undefined;
    } else if (current) current.push(w);
  }
  return into;
}

/** Run a launch script and return the command whose words `match` picks (the last one): its words as the shell
 * made them (a double-quoted "${x}" stays one word, blanks and all: verl's `key="[a, b]"` overrides). */
export function launchCommand(
  text: string,
  match: (argv: string[]) => boolean,
): { argv: string[] | undefined; run: ShellRun } {
  const run = runShell(text);
  let argv: string[] | undefined;
  for (const cmd of run.commands) {
    const words = cmd.filter(Boolean);
    if (match(words)) argv = words;
  }
  return { argv, run };
}

/** The world size: the caller's option, else what the file says, else llmem's default (noted). */
export function worldSize(d: Draft, fromFile: number | undefined, option: number | undefined, what: string): number {
  const n = option ?? fromFile;
  if (n !== undefined) {
    d.set('parallel.gpus', n);
    return n;
  }
  d.set('parallel.gpus', DEFAULT_WORLD);
  d.note(
    `${what} does not give the number of training processes: parallel.gpus ${DEFAULT_WORLD} assumed (give the world size to change it); the batch keys below are derived with it`,
  );
  return DEFAULT_WORLD;
}

/** A whole quotient, or an error naming the key (the frameworks assert these divide). */
export function divide(a: number, b: number, key: string, what: string): number {
  if (b <= 0 || a % b !== 0) throw new ImportError(key, `${key}: ${what} (${a} is not a multiple of ${b})`);
  return a / b;
}

/** training.seq_len = rl.prompt_len + rl.response_len (the core's defaults, 512 each, where unset):
 * the longest sequence, which the training keys describe when rl.algorithm is none. */
export function seqLenFromRl(d: Draft): void {
  const len = (k: string) => (typeof d.get(k) === 'number' ? (d.get(k) as number) : 512);
  d.set('training.seq_len', len('rl.prompt_len') + len('rl.response_len'));
}

/** No rollout engine: the trainer generates with transformers generate() on the training model. Its KV cache
 * is not modelled; the rollout is counted as happening elsewhere (rl.rollout.placement separate), said on `key`. */
export function generateWithoutEngine(d: Draft, key: string, why: string): void {
  d.set('rl.rollout.placement', 'separate');
  d.skip(
    key,
    `${why}: completions come from transformers generate() on the training model, whose KV cache is not modelled; counted as generation elsewhere`,
  );
}
