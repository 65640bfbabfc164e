// A stage's layer kinds in words, for the page's per-stage view and the CLI's stage rows.
import type { RankResult } from './results.js';

const MIXER_NAMES: Record<string, string> = {
  full: 'attention',
  sliding: 'sliding',
  chunked: 'chunked',
  linear: 'linear attn.',
  ssm: 'Mamba',
  none: 'MLP-only',
};

/** A stage's layer kinds when its layers differ: " (9 linear attn., 3 attention; 12 MoE)". */
export function layerKinds(x: RankResult): string {
  const mixers = Object.entries(x.mixer_layers).filter(([, n]) => n > 0);
  const uniform = mixers.length <= 1 && (mixers[0]?.[0] ?? 'full') === 'full';
  const moe = x.moe_layers > 0 && x.moe_layers < x.layers ? `${x.moe_layers} MoE` : '';
  if (uniform && !moe) return '';
  const kinds = uniform ? '' : mixers.map(([k, n]) => `${n} ${MIXER_NAMES[k] ?? k}`).join(', ');
  return ` (${[kinds, moe].filter(Boolean).join('; ')})`;
}
