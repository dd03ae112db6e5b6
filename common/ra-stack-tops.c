/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include "ra-stack.h"
#include "ra-util.h"

int ra_stack_tops_to_redecide(const char *sysfs_root, char *const *changed, RaStackIsManaged is_managed,
                              void *userdata, char ***ret) {
        _cleanup_(ra_strv_freep) char **tops = NULL;
        int r;

        for (size_t i = 0; changed && changed[i]; i++) {
                _cleanup_(ra_strv_freep) char **above = NULL;

                r = ra_stack_find_tops(sysfs_root, changed[i], &above, NULL);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue; /* gone, or torn down: the top's own event says so */

                for (size_t j = 0; above && above[j]; j++) {
                        if (ra_strv_contains(changed, above[j]) || ra_strv_contains(tops, above[j]) ||
                            !is_managed(userdata, above[j]))
                                continue;
                        if (ra_strv_push(&tops, above[j]) < 0)
                                return -ENOMEM;
                }
        }

        *ret = TAKE_PTR(tops);
        return 0;
}
