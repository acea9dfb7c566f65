#!/usr/bin/env bash
# session 14 call 4: d3 with finer stamps (the experiment build of exp_trace.patch), 4 GPUs.
NPS=4 EXPS="256 511 260 288" bash "$(dirname "$0")/d3.sh"
