# shellcheck shell=sh
# Ends a run from outside it, after lib.sh: every process of the program's uid. The host's
# last resort, when the container's supervisor did not end the run itself.
kill_all
