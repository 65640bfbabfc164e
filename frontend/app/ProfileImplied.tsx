// Under the training-stack fields: the mechanisms the profile sets among the
// keys left automatic (core/profiles.def), each with the framework file it
// follows (loaded when the list first shows: config/profile.ts). Setting
// a key yourself always wins over the profile.
import { useEffect, useState } from 'preact/hooks';
import { profileSources, sourceOf } from '../config/profile.js';
import { labelOf } from '../fields.js';
import { useApp } from './context.js';

export function ProfileImplied() {
  const s = useApp();
  const implied = s.implied.value;
  const sources = useProfileSources(implied.length > 0);
  if (!implied.length) return null;
  return (
    <div class="field wide profile-implied" data-testid="profile-implied">
      <p class="hint">Set by the training stack (change a field to override):</p>
      <ul>
        {implied.map((p) => {
          const source = sourceOf(sources, p.row);
          return (
            <li key={p.path} title={source} data-path={p.path}>
              <span>{labelOf(p.path)}</span>: <code>{String(p.value)}</code> <small class="muted">{source}</small>
            </li>
          );
        })}
      </ul>
    </div>
  );
}

/** The profile rows' source texts, loaded the first time `wanted` holds (none until then). */
export function useProfileSources(wanted: boolean): readonly string[] {
  const [sources, setSources] = useState<readonly string[]>([]);
  useEffect(() => {
    if (wanted && !sources.length) void profileSources().then(setSources);
  }, [wanted, sources.length]);
  return sources;
}
