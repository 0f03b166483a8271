"""The sandboxes' in-sandbox servers: stdlib only, loaded by the sandbox's own interpreter.

The local backend's server: ``main`` (entry, namespaces, request loop), ``rootfs`` (the
read-only root). The docker backend's supervisor, one per container: ``supervisor`` (entry,
request loop, /work), ``reaper`` (killing and cleaning up as the program's uid), sent into the
container by ``service.sandbox.docker.channel``. Shared by both: ``template`` (the pristine
process every run is forked from, which never sees a job), ``runner`` (one run: fork from the
template, drop privileges, supervise), ``pyfast`` and ``warm`` (Python programs in the warm
interpreter), ``seccomp`` (the filter of every run), ``wire`` (the frames to the host).
"""
