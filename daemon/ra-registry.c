/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "ra-log.h"
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

/* What comes after a part of a list with left parts still to come: "a, b and c". */
static const char *separator(size_t left) {
        if (left == 0)
                return "";
        return left == 1 ? " and " : ", ";
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
                             separator(left));
                if (n < 0)
                        break;
                off += (size_t) n;
        }
}

/* "loop12" is "loop" and 12; false for a name that does not end in a number. */
static bool split_name(const char *name, size_t *ret_prefix, unsigned long *ret_n) {
        size_t len = strlen(name), p = len;

        while (p > 0 && name[p - 1] >= '0' && name[p - 1] <= '9')
                p--;
        if (p == len || len - p > 9)
                return false;
        *ret_prefix = p;
        *ret_n = strtoul(name + p, NULL, 10);
        return true;
}

/* loop2 before loop10: the numbers of one kind of device in their order. */
static int compare_names(const void *a, const void *b) {
        const char *x = *(const char *const *) a, *y = *(const char *const *) b;
        unsigned long nx, ny;
        size_t px, py;

        if (!split_name(x, &px, &nx) || !split_name(y, &py, &ny) || px != py || strncmp(x, y, px) != 0)
                return strcmp(x, y);
        return nx < ny ? -1 : nx > ny;
}

/* Whether b is the device after a: loop7 after loop6. */
static bool follows(const char *a, const char *b) {
        unsigned long na, nb;
        size_t pa, pb;

        return split_name(a, &pa, &na) && split_name(b, &pb, &nb) && pa == pb && strncmp(a, b, pa) == 0 &&
               nb == na + 1;
}

static void append(char *buf, size_t size, size_t *off, const char *separator, const char *name) {
        int n;

        if (*off >= size)
                return;
        n = snprintf(buf + *off, size - *off, "%s%s", separator, name);
        *off = n < 0 ? size : *off + (size_t) n;
}

size_t ra_registry_describe_empty(const Manager *m, char *buf, size_t size) {
        _cleanup_free_ const char **names = NULL;
        size_t n = 0, off = 0;

        buf[0] = '\0';
        names = calloc(m->n_disks + 1, sizeof(char *));
        for (size_t i = 0; i < m->n_disks; i++)
                if (ra_kind_is_block(m->disks[i]->kind) && m->disks[i]->in.attrs.size_bytes == 0) {
                        if (names)
                                names[n] = m->disks[i]->name;
                        n++;
                }
        /* Without memory for the names, the count alone. */
        if (!names || n == 0)
                return n;

        qsort(names, n, sizeof(char *), compare_names);
        for (size_t i = 0, j; i < n; i = j + 1) {
                /* A run of consecutive names is said as its ends: loop0-loop99. */
                for (j = i; j + 1 < n && follows(names[j], names[j + 1]);)
                        j++;
                append(buf, size, &off, i > 0 ? ", " : "", names[i]);
                if (j > i)
                        append(buf, size, &off, j > i + 1 ? "-" : ", ", names[j]);
        }
        /* Too many runs for the line: it ends in ", ..." rather than in half a name. */
        if (off >= size && size > 6) {
                char *cut = buf + size - 6;

                while (cut > buf && *cut != ',')
                        cut--;
                if (cut > buf)
                        strcpy(cut, ", ...");
                else
                        strcpy(buf + size - 4, "...");
        }
        return n;
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
