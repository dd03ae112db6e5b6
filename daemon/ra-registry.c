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
        size_t bdis = 0, disks;

        for (size_t i = 0; i < m->n_disks; i++)
                bdis += m->disks[i]->kind == RA_KIND_BDI;
        disks = m->n_disks - bdis;
        if (bdis == 0)
                (void) snprintf(buf, size, "%zu disk%s", disks, disks == 1 ? "" : "s");
        else
                (void) snprintf(buf, size, "%zu disk%s and %zu bdi%s", disks, disks == 1 ? "" : "s", bdis,
                                bdis == 1 ? "" : "s");
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
