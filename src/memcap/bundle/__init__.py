"""Training on a machine without Snakemake (a cloud VM, an interactive GPU node, a machine you have
until a deadline): the missing MLT runs of chosen sweeps and seeds trained as the rules would train
them, and what finished carried back to the project as one bundle (`memcap bundle train | take`).

jobs.py     which jobs and packs to train, and the rules' own commands for them
runner.py   the commands N at a time until a deadline; then SIGTERM (each job saves its checkpoint)
archive.py  a bundle of what finished (runs, finished members of stopped packs, logs); taking it in
"""
