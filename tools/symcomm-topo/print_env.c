/* symcomm-topo --env: every parameter symcomm reads. */
#include <stdio.h>

#include "topo_print.h"

int print_env(FILE *out, int names_only) {
  int n = symcomm_param_count();
  for (int i = 0; i < n; i++) {
    const char *name, *type, *def, *value, *doc;
    symcomm_result_t res = symcomm_param_info(i, &name, &type, &def, &value, &doc);
    if (res != SYMCOMM_OK)
      return report_failure("symcomm_param_info", res, NULL);
    if (names_only) {
      fprintf(out, "%s\n", name);
      continue;
    }
    fprintf(out, "%-28s = %-12s (%s, default %s)\n    %s\n", name, value ? value : "(unset)", type,
            def ? def : "unset", doc);
  }
  return 0;
}
