#!/usr/bin/env python3
"""ptyrun.py COLS OUT CMD...: runs CMD with its stderr on a pseudo-terminal
COLS columns wide (stdin /dev/null, stdout inherited) and writes every
byte the terminal received to OUT; exits with CMD's status."""
import fcntl
import os
import struct
import sys
import termios

cols, out, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
master, slave = os.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=[
    (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
    (os.POSIX_SPAWN_DUP2, slave, 2),
    (os.POSIX_SPAWN_CLOSE, master)])
os.close(slave)
data = bytearray()
while True:
    try:
        b = os.read(master, 65536)
    except OSError:             # EIO: every slave fd is closed
        break
    if not b:
        break
    data += b
_, status = os.waitpid(pid, 0)
with open(out, "wb") as f:
    f.write(data)
sys.exit(os.waitstatus_to_exitcode(status))
