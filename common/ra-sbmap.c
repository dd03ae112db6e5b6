/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "ra-sbmap.h"

/* Anonymous devs have major 0: below this in the kernel's encoding. */
#define KDEV_MAJOR_ONE (UINT32_C(1) << 20)

uint32_t ra_kdev(dev_t dev) {
        return (uint32_t) major(dev) << 20 | (uint32_t) (minor(dev) & (KDEV_MAJOR_ONE - 1));
}

void ra_sbmap_clear(RaSbMap *m) {
        free(m->entries);
        free(m->anon);
        *m = (RaSbMap){};
}

int ra_sbmap_add(RaSbMap *m, uint32_t s_dev, uint64_t ino, dev_t knob) {
        RaSbEntry *e;

        /* Bind mounts and a file system mounted twice share one superblock. */
        for (size_t i = 0; i < m->n; i++)
                if (m->entries[i].s_dev == s_dev && m->entries[i].ino == ino) {
                        m->entries[i].knob = knob;
                        return 0;
                }

        e = reallocarray(m->entries, m->n + 1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        m->entries = e;
        m->entries[m->n++] = (RaSbEntry){ .s_dev = s_dev, .ino = ino, .knob = knob };
        return 0;
}

int ra_sbmap_add_anon(RaSbMap *m, uint32_t s_dev) {
        uint32_t *a;

        for (size_t i = 0; i < m->n_anon; i++)
                if (m->anon[i] == s_dev)
                        return 0;
        a = reallocarray(m->anon, m->n_anon + 1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        m->anon = a;
        m->anon[m->n_anon++] = s_dev;
        return 0;
}

bool ra_sbmap_lookup(const RaSbMap *m, uint32_t s_dev, uint64_t ino, dev_t *ret_knob) {
        bool bdev = s_dev != 0 && s_dev < KDEV_MAJOR_ONE;

        if (bdev)
                for (size_t i = 0; i < m->n_anon; i++)
                        if (m->anon[i] == s_dev) {
                                bdev = false;
                                break;
                        }

        for (size_t i = 0; i < m->n; i++) {
                const RaSbEntry *e = &m->entries[i];

                if ((e->s_dev != 0 && e->s_dev == s_dev) || (e->s_dev == 0 && bdev && e->ino == ino)) {
                        *ret_knob = e->knob;
                        return true;
                }
        }
        return false;
}

static int append(char *buf, size_t size, size_t *len, const char *s) {
        size_t n = strlen(s);

        if (*len + n + 1 > size)
                return -ENOBUFS;
        memcpy(buf + *len, s, n + 1);
        *len += n;
        return 0;
}

int ra_sbmap_filter(const RaSbMap *m, char *buf, size_t size) {
        size_t len = 0, raw = 0;
        char term[96];
        int r = 0;

        r = append(buf, size, &len, "(s_dev == 0");
        for (size_t i = 0; i < m->n && r >= 0; i++)
                if (m->entries[i].s_dev != 0) {
                        (void) snprintf(term, sizeof(term), " || s_dev == %" PRIu32, m->entries[i].s_dev);
                        r = append(buf, size, &len, term);
                } else
                        raw++;

        /* The block devices' superblock is anonymous: any major-0 one, by inode. */
        if (raw > 0 && r >= 0) {
                bool first = true;

                (void) snprintf(term, sizeof(term), " || (s_dev < %" PRIu32 " && (", KDEV_MAJOR_ONE);
                r = append(buf, size, &len, term);
                for (size_t i = 0; i < m->n && r >= 0; i++)
                        if (m->entries[i].s_dev == 0) {
                                (void) snprintf(term, sizeof(term), "%si_ino == %" PRIu64,
                                                first ? "" : " || ", m->entries[i].ino);
                                r = append(buf, size, &len, term);
                                first = false;
                        }
                if (r >= 0)
                        r = append(buf, size, &len, "))");
        }
        if (r >= 0)
                r = append(buf, size, &len, ")");

        if (r < 0) {
                /* Too many to name: take every file, and pick ours when reading. */
                len = 0;
                return append(buf, size, &len, "s_dev != 0");
        }
        return 0;
}
