/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdlib.h>

#include "ra-context.h"
#include "ra-registry.h"
#include "ra-tune.h"
#include "ra-util.h"

const char **ra_tune_leaf_identities(Manager *m, const RaDisk *d) {
        const char **ids;

        if (d->kind != RA_KIND_STACK || !d->as_stack.stack || d->as_stack.stack->n_leaves == 0)
                return NULL;
        ids = calloc(d->as_stack.stack->n_leaves, sizeof(char *));
        for (size_t i = 0; ids && i < d->as_stack.stack->n_leaves; i++) {
                const RaDisk *leaf = ra_registry_find(m, ra_stack_leaf(d->as_stack.stack, i)->name);

                ids[i] = leaf ? leaf->identity : NULL;
        }
        return ids;
}

void ra_tune_stack_tops(Manager *m, const RaDisk *leaf, const char *event) {
        /* Deciding neither adds to the registry nor drops from it: the loop decides as it goes. */
        for (size_t i = 0; i < m->n_disks; i++) {
                RaDisk *top = m->disks[i];
                bool above = false;

                if (top == leaf || top->kind != RA_KIND_STACK || !top->as_stack.stack)
                        continue;
                for (size_t j = 0; j < top->as_stack.stack->n_leaves && !above; j++)
                        above = ra_streq(ra_stack_leaf(top->as_stack.stack, j)->name, leaf->name);
                if (above)
                        ra_tune_disk(m, top, event);
        }
}
