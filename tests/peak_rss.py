"""The peak-RSS probe the memory tests run in a fresh process: code prepended to each test's script.

``rss()`` is the resident memory now, ``peak()`` the high-water mark (VmHWM), which writing "5" to
``/proc/self/clear_refs`` resets, so a test measures one step or one forward and not the imports before it."""

PROBE = '''
import os


def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
'''
