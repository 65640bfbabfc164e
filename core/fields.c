/* The field table (from fields.def), defaults, and the name lists. */
#include <string.h>

#include "llmem.h"

#define STR_(c_name, json) json,
#define DEFINE_LIST_(LIST) static const char *const list_##LIST[] = {LLMEM_##LIST##_VALUES(STR_)};
LLMEM_ENUM_LISTS(DEFINE_LIST_)

/* Keys that are not enums or sets point at this empty list. */
static const char *const list_NONE[] = {""};
#define LIST_LEN_(LIST) ((int)(sizeof(list_##LIST) / sizeof(list_##LIST[0])))

#define NULLABLE LLMEM_FLAG_NULLABLE
#define MONTHS LLMEM_FLAG_MONTHS
#define ROW_(path, member, kind, list, def, lo, hi, flags) \
  {path,          LLMEM_KIND_##kind, flags,                \
   (double)(def), (double)(lo),      (double)(hi),         \
   list_##list,   LIST_LEN_(list),   offsetof(llmem_input, member)},
static const llmem_field field_table[] = {LLMEM_FIELDS(ROW_)};
#undef ROW_

static const char *const status_messages[] = {LLMEM_STATUSES(STR_)};
static const char *const warning_messages[] = {LLMEM_WARNINGS(STR_)};
static const char *const category_names[] = {LLMEM_CATEGORIES(STR_)};
static const char *const phase_names[] = {LLMEM_PHASES(STR_)};
static const char *const rl_model_names[] = {LLMEM_RL_MODELS(STR_)};
static const char *const step_part_names[] = {LLMEM_STEP_PARTS(STR_)};
static const char *const suggest_kind_names[] = {LLMEM_SUGGEST_KINDS(STR_)};
/* the wasm build leaves the terms' texts out (CMakeLists.txt): wasm/term-texts.ts carries them, for the Why panel
 * and the CLI (scripts/gen-term-texts.mjs reads them from llmem.h) */
#ifdef LLMEM_TERM_TEXT_IN_JS
#define TERM_LABEL_(c_name, label, formula) "",
#define TERM_FORMULA_(c_name, label, formula) "",
#else
#define TERM_LABEL_(c_name, label, formula) label,
#define TERM_FORMULA_(c_name, label, formula) formula,
#endif
static const char *const term_labels[] = {LLMEM_TERMS(TERM_LABEL_)};
static const char *const term_formulas[] = {LLMEM_TERMS(TERM_FORMULA_)};

void llmem_defaults(llmem_input *in) {
  if (!in) return;
  for (int i = 0; i < LLMEM_FIELD_COUNT; i++) {
    const llmem_field *f = &field_table[i];
    double *slot = (double *)(void *)((char *)in + f->offset);
    int n = f->kind == LLMEM_KIND_LIST ? LLMEM_MAX_PATTERN : 1;
    for (int k = 0; k < n; k++) slot[k] = f->default_value;
  }
}

const llmem_field *llmem_field_at(int index) {
  if (index < 0 || index >= LLMEM_FIELD_COUNT) return NULL;
  return &field_table[index];
}

int llmem_field_index(const char *path) {
  if (!path) return -1;
  for (int i = 0; i < LLMEM_FIELD_COUNT; i++)
    if (strcmp(field_table[i].path, path) == 0) return i;
  return -1;
}

const char *llmem_status_message(llmem_status status) {
  if ((int)status < 0 || status >= LLMEM_STATUS_COUNT) return "unknown status";
  return status_messages[status];
}

const char *llmem_warning_message(llmem_warning warning) {
  if ((int)warning < 0 || warning >= LLMEM_WARNING_COUNT) return "unknown warning";
  return warning_messages[warning];
}

const char *llmem_category_name(int category) {
  if (category < 0 || category >= LLMEM_CAT_COUNT) return "";
  return category_names[category];
}

const char *llmem_phase_name(int phase) {
  if (phase < 0 || phase >= LLMEM_PHASE_COUNT) return "";
  return phase_names[phase];
}

const char *llmem_term_label(int term) {
  if (term < 0 || term >= LLMEM_TERM_COUNT) return "";
  return term_labels[term];
}

const char *llmem_term_formula(int term) {
  if (term < 0 || term >= LLMEM_TERM_COUNT) return "";
  return term_formulas[term];
}

const char *llmem_rl_model_name(int model) {
  if (model < 0 || model >= LLMEM_RL_MODEL_COUNT) return "";
  return rl_model_names[model];
}

const char *llmem_step_part_name(int part) {
  return part >= 0 && part < LLMEM_STEP_PART_COUNT ? step_part_names[part] : "";
}

const char *llmem_suggest_kind_name(int kind) {
  return kind >= 0 && kind < LLMEM_SUGGEST_KIND_COUNT ? suggest_kind_names[kind] : "";
}
