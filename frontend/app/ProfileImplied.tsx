// Under the training-stack fields: the mechanisms the profile sets among the
// keys left automatic (core/profiles.def), each with the framework file it
// follows. Setting a key yourself always wins over the profile.
import { labelOf } from '../fields.js';
import { useApp } from './context.js';

export function ProfileImplied() {
  const s = useApp();
  const implied = s.implied.value;
  if (!implied.length) return null;
  return (
    <div class="field wide profile-implied" data-testid="profile-implied">
      <p class="hint">Set by the training stack (change a field to override):</p>
      <ul>
        {implied.map((p) => (
          <li key={p.path} title={p.source} data-path={p.path}>
            <span>{labelOf(p.path)}</span>: <code>{String(p.value)}</code> <small class="muted">{p.source}</small>
          </li>
        ))}
      </ul>
    </div>
  );
}
