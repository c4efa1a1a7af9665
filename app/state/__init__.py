"""What a browser session holds between reruns: the Lab's runs of this session (``lab``) and whether the session is
still connected (``liveness``), so server work can stop when nobody waits for it."""
