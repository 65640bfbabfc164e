// One panel of the form (Model, Training, Parallelism, Hardware): its groups
// of fields, dependent fields hidden, collapsible sub-sections that open
// when their feature is in use or one of their keys was changed.
import { computed, useComputed } from '@preact/signals';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { visible, type Group, type Section } from '../fields.js';
import { useApp } from './context.js';
import { FieldInput } from './FieldInput.js';
import { GpuPicker } from './GpuPicker.js';
import { lazy } from './lazy.js';
import { ModelPicker } from './ModelPicker.js';
import { ProfileImplied } from './ProfileImplied.js';

// the Hub fetch button and its token field, loaded after the first result (issue 17: the first load)
const HubFetch = lazy(() => import('./HubFetch.js').then((m) => m.HubFetch), 'Hub fetch', true);

function GroupBody({ group, paths }: { group: Group; paths: string[] }) {
  return (
    <div class="fields">
      {group.picker === 'model' && <ModelPicker />}
      {group.picker === 'model' && <HubFetch />}
      {group.picker === 'gpu' && <GpuPicker />}
      {paths.map((p) => (
        <FieldInput key={p} path={p} />
      ))}
      {group.picker === 'profile' && <ProfileImplied />}
    </div>
  );
}

/** A computed's value, the computed rebuilt when `key` changes (useComputed keeps its first inputs' closure). */
function useDerived<T>(fn: () => T, key: string): T {
  return useMemo(() => computed(fn), [key]).value;
}

function Collapsible({ group, paths, prefix }: { group: Group; paths: string[]; prefix: string }) {
  const s = useApp();
  // through computeds (rebuilt with the paths): an edit re-renders a group only when its counts or marks change
  const key = paths.join(' ');
  const changed = useDerived(() => paths.filter((p) => p in s.doc.value).length, key);
  const errorHere = useDerived(() => paths.includes(s.error.value?.path ?? ''), key);
  const used = useDerived(() => group.used?.(s.get) ?? false, key);
  const auto = used || changed > 0 || errorHere;
  const [userOpen, setUserOpen] = useState<boolean | null>(null);
  useEffect(() => setUserOpen(null), [auto]);
  const open = userOpen ?? auto;
  return (
    <details class="group" open={open} onToggle={(e) => setUserOpen((e.currentTarget as HTMLDetailsElement).open)}>
      <summary>
        <span>{group.title}</span>
        {used && <span class="pill">in use</span>}
        {changed > 0 && <span class="pill changed">{changed} changed</span>}
      </summary>
      {group.clear && used && (
        <button type="button" class="link clear" onClick={() => s.clearGroup(prefix)}>
          {group.clear}
        </button>
      )}
      <GroupBody group={group} paths={paths} />
    </details>
  );
}

export function InputPanel({ section }: { section: Section }) {
  const s = useApp();
  // re-render the panel only when the set of visible inputs changes
  const shown = useComputed(() =>
    section.groups.map((g) => g.paths.filter((p) => s.core.field(p) && visible(p, s.get)).join(' ')).join('|'),
  ).value.split('|');
  return (
    <section class="panel" aria-labelledby={`panel-${section.id}`}>
      <h2 id={`panel-${section.id}`}>{section.title}</h2>
      {section.groups.map((g, i) => {
        const paths = shown[i] ? shown[i].split(' ') : [];
        if (!paths.length && !g.picker) return null;
        if (!g.title) return <GroupBody key={i} group={g} paths={paths} />;
        const prefix = paths[0]?.split('.').slice(0, -1).join('.') ?? '';
        return <Collapsible key={i} group={g} paths={paths} prefix={prefix} />;
      })}
    </section>
  );
}
