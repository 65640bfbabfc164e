import { readFileSync } from 'node:fs';
const hf = await import('../build/js/frontend/config/importers/hf.js');
const node = await import('../build/js/wasm/node.js');
const core = await node.loadCore();
for (const f of process.argv.slice(2)) {
  const r = hf.importHfConfig(JSON.parse(readFileSync(f, 'utf8')));
  if (r.error) {
    console.log(f, r.error);
    continue;
  }
  const e = core.estimate({ model: r.config.model });
  console.log(
    f,
    JSON.stringify(r.config.model.vision),
    '\nwarn',
    r.warnings,
    '\nunknown',
    r.unknown,
    '\n=>',
    e.ok ? e.params.total : e.error,
  );
}
