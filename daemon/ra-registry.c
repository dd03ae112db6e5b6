/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <string.h>
#include <systemd/sd-daemon.h>

#include "ra-registry.h"
#include "ra-util.h"

void ra_registry_changed(Manager *m) {
        if (m->on_disks_changed)
                m->on_disks_changed(m);
}

RaDisk *ra_registry_find(Manager *m, const char *name) {
        for (size_t i = 0; i < m->n_disks; i++)
                if (strcmp(m->disks[i]->name, name) == 0)
                        return m->disks[i];
        return NULL;
}

int ra_registry_add(Manager *m, RaKind kind, const char *name, RaDisk **ret) {
        _cleanup_(ra_disk_freep) RaDisk *d = NULL;
        RaDisk **grown;
        int r;

        r = ra_disk_new(m, kind, name, &d);
        if (r < 0)
                return r;

        grown = realloc(m->disks, (m->n_disks + 1) * sizeof(RaDisk *));
        if (!grown)
                return -ENOMEM;

        m->disks = grown;
        m->disks[m->n_disks++] = d;
        ra_registry_changed(m);
        ra_registry_notify_status(m);
        *ret = TAKE_PTR(d);
        return 0;
}

void ra_registry_remove(Manager *m, RaDisk *d) {
        for (size_t i = 0; i < m->n_disks; i++)
                if (m->disks[i] == d) {
                        m->disks[i] = m->disks[--m->n_disks];
                        break;
                }
        ra_registry_changed(m);
        ra_disk_free(d);
        ra_registry_notify_status(m);
}

void ra_registry_describe(const Manager *m, char *buf, size_t size) {
        static const char *const one[_RA_KIND_MAX] = { "disk", "bdi", "stacked device" };
        size_t count[_RA_KIND_MAX] = {}, off = 0, parts = 0, left;
        /* The order they are said in: disks always, then stacks and bdis when there are any. */
        static const RaKind order[] = { RA_KIND_DISK, RA_KIND_STACK, RA_KIND_BDI };

        for (size_t i = 0; i < m->n_disks; i++)
                count[m->disks[i]->kind]++;
        for (size_t i = 0; i < ELEMENTSOF(order); i++)
                parts += order[i] == RA_KIND_DISK || count[order[i]] > 0;
        left = parts;
        buf[0] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(order) && off < size; i++) {
                RaKind k = order[i];
                int n;

                if (k != RA_KIND_DISK && count[k] == 0)
                        continue;
                left--;
                n = snprintf(buf + off, size - off, "%zu %s%s%s", count[k], one[k], count[k] == 1 ? "" : "s",
                             left > 1 ? ", " : left == 1 ? " and " : "");
                if (n < 0)
                        break;
                off += (size_t) n;
        }
}

void ra_registry_notify_status(Manager *m) {
        char managed[64];

        /* Coldplug would say it once for each disk found. */
        if (!m->ready)
                return;
        ra_registry_describe(m, managed, sizeof(managed));
        (void) sd_notifyf(false, "STATUS=Managing %s%s.", managed,
                          ra_context_observing(m) ? " in observe mode" : "");
}
