// What tells an accelerate config (the YAML `accelerate config` writes) from the files it launches: shared by the
// importers' kind detection and the page's two-file pairing, which must not load the importers to decide.

/** An accelerate config: launcher keys at the top level, and no model or recipe key (a TRL recipe may carry
 * num_processes too, but names its model). */
export function isAccelerateConfig(text: string): boolean {
  return (
    !/^\s*\{/.test(text) &&
    /^(distributed_type|compute_environment|fsdp_config|num_processes):/m.test(text) &&
    !/^(base_model|model_name_or_path):/m.test(text)
  );
}
