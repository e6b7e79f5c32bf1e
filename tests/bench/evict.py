#!/usr/bin/env python3
"""evict.py DIR...: drops the page cache of every regular file under DIR.

The bench VM returns free memory to its host (virtio free page
reporting): writing into pages that were handed back costs a host fault
each, several times the copy itself.  The bench keeps every run's output
(renamed away, never deleted: ext4 allocates inodes slowly next to many
just deleted), so the page cache kept growing into such pages and each
run became slower than the one before, by up to 2.7x on (a).  Evicting
the previous run's files (after sync, outside the timing) frees their
pages for the next run to reuse, as a machine that keeps its memory
would."""
import os
import sys

for top in sys.argv[1:]:
    for root, dirs, files in os.walk(top):
        for f in files:
            p = os.path.join(root, f)
            try:
                fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
