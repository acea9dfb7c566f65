/* The topology of the host this process runs on. */
#ifndef SC_TOPO_LOCAL_TOPO_H
#define SC_TOPO_LOCAL_TOPO_H

#include "topo/topo.h"

/* SYMCOMM_TOPO_FILE when set (for simulated host H, <base>_node<H>.xml when that
 * file exists); else, on a real host, the GPUs NVML shows (libnvidia-ml.so.1,
 * in CUDA's numbering under CUDA_VISIBLE_DEVICES) when there are at least
 * min_gpus of them and SYMCOMM_BACKEND is not host; else a built-in simulated
 * host of min_gpus GPUs on one NVSwitch, with an INFO line saying why NVML
 * was not used.
 * On simulated host H (sim_host >= 0) every bus id carries H in its PCI domain,
 * so that devices of different simulated hosts never share a bus id. */
sc_result_t sc_topo_load_local(int sim_host, int min_gpus, sc_topo_t **topo);

#endif
