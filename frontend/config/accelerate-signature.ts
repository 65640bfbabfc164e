// What tells an accelerate config (the YAML `accelerate config` writes) from the files it launches: shared by the
// importers' kind detection and the page's two-file pairing, which must not load the importers to decide.

/** An accelerate config: launcher keys at the top level, and no model or recipe key (a TRL recipe may carry
 * num_processes too, but names its model). */
export function isAccelerateConfig(text: string): boolean {
  // accelerate's config files are YAML or JSON (commands/config/config_args.py load_config_from_file: .json read with
  // json.load; ms-swift's examples/train/multi-gpu/*/fsdp*.json)
  if (/^\s*\{/.test(text))
    return /"(distributed_type|compute_environment)"\s*:/.test(text) && /"num_processes"\s*:/.test(text);
  return (
    /^(distributed_type|compute_environment|fsdp_config|num_processes):/m.test(text) &&
    !/^(base_model|model_name_or_path):/m.test(text)
  );
}
