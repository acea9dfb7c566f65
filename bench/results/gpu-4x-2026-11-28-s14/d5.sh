#!/usr/bin/env bash
# session 14 call 5: d3 with one load at a time, each waited for (SC_EXP bit 512), 4 GPUs.
NPS=4 EXPS="768 1023" bash "$(dirname "$0")/d3.sh"
