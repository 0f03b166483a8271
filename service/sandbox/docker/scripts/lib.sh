# shellcheck shell=sh
# The functions of the script the docker backend runs as a program's uid, under dash: the
# host's last resort when a container's supervisor does not answer (kill.sh). The host puts
# this file before kill.sh in one `sh -c` text: nothing needs installing in the runner image.
# Builtins only in uid_of and others: a fork there would count itself.

# $u: the real uid in the status file of /proc entry $1 (empty once the process is gone).
uid_of() {
    u=
    {
        while read -r k v _; do
            if [ "$k" = "Uid:" ]; then u=$v; break; fi
        done < "$1/status"
    } 2>/dev/null
}

# $c: how many processes other than this shell run as its uid ($me).
others() {
    c=0
    for p in /proc/[0-9]*; do
        if [ "${p#/proc/}" != "$$" ]; then uid_of "$p"; [ "$u" = "$me" ] && c=$((c + 1)); fi
    done
}

# Kill every other process of the caller's uid (kill(-1) spares the caller and PID 1) until
# /proc shows none, read by the real uid in each status file: a process that made itself
# non-dumpable shows its /proc directory as root's, and a killed one stays until its reaper
# (the supervisor's template) reaps it.
kill_all() {
    uid_of /proc/self
    me=$u
    others
    r=0
    while [ "$c" -gt 0 ] && [ "$r" -lt 2000 ]; do
        kill -9 -1 2>/dev/null
        r=$((r + 1))
        others
    done
}
