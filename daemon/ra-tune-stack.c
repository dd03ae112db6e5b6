/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdlib.h>

#include "ra-context.h"
#include "ra-registry.h"
#include "ra-tune.h"
#include "ra-util.h"

void ra_tune_leaf_identities(Manager *m, RaDisk *d) {
        d->in.leaf_identities = ra_strv_free(d->in.leaf_identities);
        if (d->kind != RA_KIND_STACK || !d->in.stack)
                return;
        for (size_t i = 0; i < d->in.stack->n_leaves; i++) {
                const RaDisk *leaf = ra_registry_find(m, ra_stack_leaf(d->in.stack, i)->name);
                const char *id = leaf ? leaf->in.identity : NULL;

                if (ra_strv_push(&d->in.leaf_identities, id ?: "") < 0) {
                        d->in.leaf_identities = ra_strv_free(d->in.leaf_identities);
                        return;
                }
        }
}

void ra_tune_stack_tops(Manager *m, const RaDisk *leaf, const char *event) {
        /* Deciding neither adds to the registry nor drops from it: the loop decides as it goes. */
        for (size_t i = 0; i < m->n_disks; i++) {
                RaDisk *top = m->disks[i];
                bool above = false;

                if (top == leaf || top->kind != RA_KIND_STACK || !top->in.stack)
                        continue;
                for (size_t j = 0; j < top->in.stack->n_leaves && !above; j++)
                        above = ra_streq(ra_stack_leaf(top->in.stack, j)->name, leaf->name);
                if (above)
                        ra_tune_disk(m, top, event);
        }
}
