"""The code verifier's harness: what runs inside the sandbox for Python tests.

Standard library only, relative imports only: the host ships this package to ``/work`` as a
zip (``bundle.py``) and starts it with ``python3 -I -S /work/driver.py``. ``plain`` is also
imported on the host, which decodes the values the harness reports with it.

Processes of one run (``driver.py``):

- the *driver* (the run's own process): forks the solution process before it reads the job,
  then reads the job, runs every test's code itself, in a fresh namespace per test, and
  reports each test on fd 3 as soon as it ends. It is never dumpable: the solution cannot
  read or write its memory, its descriptors or its result channel.
- the *solution process* (function and assert modes, ``solution_side.py``): loads the
  solution once and answers calls (a name and plain-data arguments in, plain data out);
  nothing of the tests ever enters it.
- one *program process* per stdio test, forked by the driver, running the program as
  ``__main__`` with that test's stdin.
"""
