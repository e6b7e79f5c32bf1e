#!/usr/bin/env python3
"""maxrss.py CMD...: runs CMD (stdio inherited), then prints its peak
resident set size in KiB (wait4's ru_maxrss) on fd 3; exits with CMD's
status."""
import os
import sys

pid = os.posix_spawnp(sys.argv[1], sys.argv[1:], os.environ)
_, status, ru = os.wait4(pid, 0)
os.write(3, b"%d\n" % ru.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
