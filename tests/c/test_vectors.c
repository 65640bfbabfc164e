/* The shared vectors (tests/vectors/core.txt) through the native core. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static char *trim(char *s) {
  while (*s == ' ') s++;
  char *e = s + strlen(s);
  while (e > s && (e[-1] == ' ' || e[-1] == '\n' || e[-1] == '\r')) *--e = 0;
  return s;
}

int main(int argc, char **argv) {
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/vectors/core.txt", argc > 1 ? argv[1] : ".");
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    return 1;
  }
  static llmem_result out;
  char line[8192];
  int count = 0;
  while (fgets(line, sizeof line, f)) {
    char *s = trim(line);
    if (!*s || *s == '#') continue;
    char *fields[5];
    int n = 0;
    for (char *p = s; n < 5; n++) {
      fields[n] = p;
      char *bar = strstr(p, " | ");
      if (!bar) {
        n++;
        break;
      }
      *bar = 0;
      p = bar + 3;
    }
    if (n != 5) {
      CHECK(0, "malformed vector line: %s", s);
      continue;
    }
    const char *name = trim(fields[0]), *metric = trim(fields[1]);
    double want = strtod(fields[2], NULL), rel = strtod(fields[3], NULL);
    llmem_input in;
    llmem_defaults(&in);
    CHECK(set_keys(&in, fields[4]), "%s: bad keys", name);
    llmem_status st = llmem_estimate(&in, &out);
    CHECK(st == LLMEM_OK, "%s: status %d: %s", name, st, out.error_message);
    if (st == LLMEM_OK) CHECK_NEAR(metric_of(&out, metric), want, rel, name);
    count++;
  }
  fclose(f);
  CHECK(count >= 40, "only %d vectors read", count);
  return check_report("vectors");
}
