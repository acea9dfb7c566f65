/* Every environment variable symcomm reads: (id, name, type, default, doc).
 * Nothing else in the library calls getenv(); `symcomm-topo --env` prints this table
 * and README.md documents it (a test checks that the two agree).
 * A default of NULL means "unset" (the reader decides what that implies). */

/* logging */
SC_PARAM(DEBUG, "SYMCOMM_DEBUG", STRING, "WARN",
         "log level: NONE, WARN, INFO or TRACE")
SC_PARAM(DEBUG_SUBSYS, "SYMCOMM_DEBUG_SUBSYS", STRING, "ALL",
         "comma-separated subsystems to log (INIT,BOOT,TOPO,ENV,NET,P2P,WIN,COLL,TOOL,DEV or ALL); ^ before the list excludes")
SC_PARAM(DEBUG_FILE, "SYMCOMM_DEBUG_FILE", STRING, NULL,
         "write the log to this file instead of stderr; %h = hostname, %p = pid, %r = rank")

/* bootstrap */
SC_PARAM(TIMEOUT, "SYMCOMM_TIMEOUT", SECONDS, "300",
         "seconds any wait (bootstrap, or a stream's) may go without progress; at least 0.001")
SC_PARAM(ADDR, "SYMCOMM_ADDR", STRING, NULL,
         "host:port of the root ([v6addr]:port for IPv6); overrides the launcher's address")
SC_PARAM(SOCKET_IFNAME, "SYMCOMM_SOCKET_IFNAME", STRING, NULL,
         "interfaces the root may listen on: prefixes, comma-separated; ^ excludes, = matches exactly")
SC_PARAM(SOCKET_FAMILY, "SYMCOMM_SOCKET_FAMILY", STRING, NULL,
         "AF_INET or AF_INET6 to restrict the root's address family")
SC_PARAM(MASTER_PORT_OFFSET, "SYMCOMM_MASTER_PORT_OFFSET", INT, "-1",
         "added to MASTER_PORT for the root's port; -1 = 1 under torchrun's agent (which owns MASTER_PORT), else 0")
SC_PARAM(JOB_KEY, "SYMCOMM_JOB_KEY", STRING, NULL,
         "a secret every rank of a launcher's job shares (16 characters or more, e.g. 32 random hex digits): makes the job's session ids and socket names unguessable; symcomm-run sets a random one")

/* devices and topology */
SC_PARAM(HOSTID, "SYMCOMM_HOSTID", INT, NULL,
         "simulated host number (0..255): ranks with different values are on different hosts")
SC_PARAM(DEVICE, "SYMCOMM_DEVICE", INT, "-1",
         "device index on this host; -1 = the local rank (on real GPUs shared by simulated hosts: the rank's place among the machine's ranks)")
SC_PARAM(SHARE_DEVICE, "SYMCOMM_SHARE_DEVICE", INT, "0",
         "1: ranks of a host may use the same device (refused otherwise, as a launch mistake); for tests of the GPU protocols on a one-GPU machine: the processes' kernels take turns on the GPU, so every wait is slow")
SC_PARAM(SPIN_US, "SYMCOMM_SPIN_US", INT, "-1",
         "simulated backend: microseconds (0..1000000) a wait polls before giving the CPU away; -1 = 20 when the process may use two cores per rank on its host (caller and stream worker), else 0")
SC_PARAM(TOPO_FILE, "SYMCOMM_TOPO_FILE", STRING, NULL,
         "NCCL-format topology XML for this host; <base>_node<HOSTID>.xml is preferred when it exists")
SC_PARAM(BACKEND, "SYMCOMM_BACKEND", STRING, "auto", "device backend: auto (cuda when a GPU is usable, else host), host (simulated GPUs) or cuda")
SC_PARAM(CUDA_BACKEND_PATH, "SYMCOMM_CUDA_BACKEND_PATH", STRING, NULL,
         "the CUDA backend's shared object; unset = libsymcomm_cuda.so next to libsymcomm.so, else on the library search path")

/* point-to-point */
SC_PARAM(P2P_CHUNK_BYTES, "SYMCOMM_P2P_CHUNK_BYTES", INT, NULL,
         "send/recv within a host moves messages in chunks of this many bytes through a staging ring per pair (default: the backend's, 512 KiB on simulated GPUs, 256 KiB on GPUs); the same on every rank")
SC_PARAM(P2P_SLOTS, "SYMCOMM_P2P_SLOTS", INT, NULL,
         "chunks a staging ring holds, shared among the lanes: how far a sender may run ahead of its receiver (default: the backend's, 4 on simulated GPUs, 32 on GPUs, and at least 2 per lane); the same on every rank")
SC_PARAM(P2P_LANES, "SYMCOMM_P2P_LANES", INT, NULL,
         "blocks that move one peer's messages within a host, 1 to 32, at most SYMCOMM_P2P_SLOTS (default: the backend's, 1 on simulated GPUs, 32 on GPUs, at most the slots and 128 blocks a launch over all peers and directions); the same on every rank")
SC_PARAM(P2P_EAGER_BYTES, "SYMCOMM_P2P_EAGER_BYTES", INT, NULL,
         "a message within a host of at most this many bytes goes eagerly: pushed with flags in its data, no rendezvous (0: never; at most SYMCOMM_P2P_LANE_BYTES and 1 MiB; default: the backend's, 16 KiB on simulated GPUs, 64 KiB on GPUs); the same on every rank")
SC_PARAM(P2P_EARLY_START, "SYMCOMM_P2P_EARLY_START", INT, "1",
         "1: on GPUs, a send/recv kernel within a host may start before the kernel ahead of it on the stream has ended (programmatic dependent launch, as SYMCOMM_COLL_EARLY_START): it reads its fixed arguments meanwhile and waits for that kernel before anything else, and once done it lets a kernel after it that was launched so start; 0: each starts once the one before it ended")
SC_PARAM(P2P_LANE_BYTES, "SYMCOMM_P2P_LANE_BYTES", INT, NULL,
         "a message within a host runs in one part per this many bytes, each on its own lane, up to SYMCOMM_P2P_LANES parts (default: the backend's, 1 MiB on simulated GPUs, 64 KiB on GPUs); the same on every rank")

/* between hosts: the stream-ordered side (src/transport/net/net_bridge.c) */
SC_PARAM(NET_STAGING, "SYMCOMM_NET_STAGING", INT, "0",
         "1: send/recv between hosts stage data through pinned host chunks even where the host "
         "reaches the buffers directly (the simulated backend), as GPU data always is")

/* network between hosts (src/transport/net/) */
SC_PARAM(NET_SOCKETS, "SYMCOMM_NET_SOCKETS", INT, "4",
         "data connections per directed pair of ranks on different hosts (1 to 64); each chunk goes on the least loaded")
SC_PARAM(NET_CHUNK_BYTES, "SYMCOMM_NET_CHUNK_BYTES", INT, "1048576",
         "messages between hosts move in chunks of this many bytes (4096 to 1 GiB); the same on every rank")
SC_PARAM(NET_WINDOW, "SYMCOMM_NET_WINDOW", INT, "32",
         "chunks in flight per directed pair of ranks on different hosts (1 to 1024)")
SC_PARAM(NET_EAGER_BYTES, "SYMCOMM_NET_EAGER_BYTES", INT, "65536",
         "messages between hosts of 1 to this many bytes (0 to 1 MiB, at most SYMCOMM_NET_CHUNK_BYTES) go without waiting for the receiver's grant; the same on every rank")
SC_PARAM(NET_THREADS, "SYMCOMM_NET_THREADS", INT, "-1",
         "helper threads per process that move the bytes of data connections between hosts within the network thread's turn (0 to 32; -1: one per 4 cores, at most 8)")
SC_PARAM(NET_FAULT, "SYMCOMM_NET_FAULT", STRING, NULL,
         "testing only: seq = the third chunk this process sends between hosts carries the next message's number (its receiver must fail, writing nothing)")

/* collectives */
SC_PARAM(COLL_SCRATCH_BYTES, "SYMCOMM_COLL_SCRATCH_BYTES", INT, NULL,
         "size of each communicator's collective scratch window (default: the backend's, 16 MiB on simulated GPUs, 128 MiB on GPUs; large calls run in rounds of a quarter of it)")
SC_PARAM(ONESHOT_MAX_BYTES, "SYMCOMM_ONESHOT_MAX_BYTES", INT, NULL,
         "all-reduce uses one-shot while its size x ranks is at most this (default: the backend's, 131072 on simulated GPUs, 4 MiB on GPUs; a quarter of it when the host's GPUs are not fully connected), else two-shot")
SC_PARAM(LL_MAX_BYTES, "SYMCOMM_LL_MAX_BYTES", INT, NULL,
         "all-reduce of at most this many bytes (up to 1 MiB), and all-gather, reduce-scatter, all-to-all, broadcast and reduce of at most this many bytes from a rank to each peer, on at most 8 ranks of a host use the LL protocol (each rank pushes its input, flagged, to every peer that needs it: no barrier); 0 turns it off; the same on every rank (default: the backend's, 65536; on GPUs 524288 for 2 ranks)")
SC_PARAM(COLL_EARLY_START, "SYMCOMM_COLL_EARLY_START", INT, "1",
         "1: on GPUs, an LL collective's kernel may start before the kernel ahead of it on the stream has ended (Hopper's programmatic dependent launch): it reads its fixed arguments meanwhile and waits for that kernel before anything else, and once past its own waits it lets a kernel after it that was launched so start (which must wait for it before reading its output); 0: each starts once the one before it ended")
SC_PARAM(COLL_BLOCKS, "SYMCOMM_COLL_BLOCKS", INT, "0",
         "blocks each collective runs in (each takes a slice of every chunk and meets only its namesakes on the other ranks): 0 = chosen by size, 1 to 128 forces that many; the same on every rank")
SC_PARAM(COLL_MAX_BLOCKS, "SYMCOMM_COLL_MAX_BLOCKS", INT, "0",
         "at most this many blocks (on GPUs one SM each) for a collective whose blocks are chosen by size, leaving the other SMs to work beside it (a GEMM); 0 = up to 128; the same on every rank; SYMCOMM_COLL_BLOCKS overrides it")
SC_PARAM(ALGO, "SYMCOMM_ALGO", STRING, NULL,
         "force algorithms, e.g. allreduce=twoshot,broadcast=split (allreduce: ll, oneshot or twoshot; allgather, reducescatter, alltoall: ll or direct; broadcast: ll, direct or split; reduce: oneshot or split; ll only where the call fits SYMCOMM_LL_MAX_BYTES; collectives within a host: across hosts each collective has its own steps)")
SC_PARAM(CHECK, "SYMCOMM_CHECK", INT, "0",
         "1 = before each collective, check through the root that every rank calls the same one (slow); read at init")

/* set by symcomm-run for each rank */
SC_PARAM(RANK, "SYMCOMM_RANK", INT, NULL, "symcomm-run: rank of this process")
SC_PARAM(WORLD_SIZE, "SYMCOMM_WORLD_SIZE", INT, NULL, "symcomm-run: number of ranks")
SC_PARAM(LOCAL_RANK, "SYMCOMM_LOCAL_RANK", INT, NULL, "symcomm-run: rank on this (simulated) host")
SC_PARAM(LOCAL_SIZE, "SYMCOMM_LOCAL_SIZE", INT, NULL, "symcomm-run: ranks on this (simulated) host")
SC_PARAM(ROOT_FD, "SYMCOMM_ROOT_FD", INT, NULL,
         "symcomm-run: listening socket inherited by rank 0, which serves the root on it")

/* read from other launchers */
SC_PARAM(TORCH_RANK, "RANK", INT, NULL, "torchrun: rank of this process")
SC_PARAM(TORCH_WORLD_SIZE, "WORLD_SIZE", INT, NULL, "torchrun: number of ranks")
SC_PARAM(TORCH_LOCAL_RANK, "LOCAL_RANK", INT, NULL, "torchrun: rank on this host")
SC_PARAM(TORCH_LOCAL_WORLD_SIZE, "LOCAL_WORLD_SIZE", INT, NULL, "torchrun: ranks on this host")
SC_PARAM(MASTER_ADDR, "MASTER_ADDR", STRING, NULL, "torchrun: host of the root")
SC_PARAM(MASTER_PORT, "MASTER_PORT", INT, NULL, "torchrun: port of the root (see SYMCOMM_MASTER_PORT_OFFSET)")
SC_PARAM(TORCHELASTIC_RUN_ID, "TORCHELASTIC_RUN_ID", STRING, NULL,
         "torchrun: present when torchrun's agent runs the job (its store holds MASTER_PORT); part of the job's identity")
SC_PARAM(TORCHELASTIC_RESTART_COUNT, "TORCHELASTIC_RESTART_COUNT", STRING, NULL,
         "torchrun: how often its agent restarted the workers (part of the job's identity)")
SC_PARAM(OMPI_RANK, "OMPI_COMM_WORLD_RANK", INT, NULL, "Open MPI: rank of this process")
SC_PARAM(OMPI_SIZE, "OMPI_COMM_WORLD_SIZE", INT, NULL, "Open MPI: number of ranks")
SC_PARAM(OMPI_LOCAL_RANK, "OMPI_COMM_WORLD_LOCAL_RANK", INT, NULL, "Open MPI: rank on this host")
SC_PARAM(OMPI_LOCAL_SIZE, "OMPI_COMM_WORLD_LOCAL_SIZE", INT, NULL, "Open MPI: ranks on this host")
SC_PARAM(PMIX_NAMESPACE, "PMIX_NAMESPACE", STRING, NULL,
         "Open MPI 5 (PMIx): the job's namespace (part of the job's identity)")
SC_PARAM(OMPI_JOBID, "OMPI_MCA_ess_base_jobid", STRING, NULL,
         "Open MPI 4: the job's id (part of the job's identity)")
SC_PARAM(SLURM_PROCID, "SLURM_PROCID", INT, NULL, "Slurm: rank of this process")
SC_PARAM(SLURM_NTASKS, "SLURM_NTASKS", INT, NULL, "Slurm: number of ranks")
SC_PARAM(SLURM_LOCALID, "SLURM_LOCALID", INT, NULL, "Slurm: rank on this host")
SC_PARAM(SLURM_JOB_ID, "SLURM_JOB_ID", STRING, NULL, "Slurm: the job's id (part of the job's identity)")
SC_PARAM(SLURM_STEP_ID, "SLURM_STEP_ID", STRING, NULL, "Slurm: the job step's id (part of the job's identity)")

/* read from CUDA's environment (topology from NVML, issue 8) */
SC_PARAM(CUDA_VISIBLE_DEVICES, "CUDA_VISIBLE_DEVICES", STRING, NULL,
         "CUDA: the GPUs a process sees; indices into NVML's GPUs map CUDA device numbers to bus ids in the host topology read from NVML")

/* read by libnccl.so.2, the NCCL shim (src/nccl/nccl_env.c), and only there:
 * each sets its symcomm variable where that is unset */
SC_PARAM(NCCL_DEBUG, "NCCL_DEBUG", STRING, NULL,
         "libnccl.so.2: WARN, INFO or TRACE (VERSION = WARN) set SYMCOMM_DEBUG")
SC_PARAM(NCCL_SOCKET_IFNAME, "NCCL_SOCKET_IFNAME", STRING, NULL,
         "libnccl.so.2: sets SYMCOMM_SOCKET_IFNAME (the same syntax)")
SC_PARAM(NCCL_COMM_ID, "NCCL_COMM_ID", STRING, NULL,
         "libnccl.so.2: host:port, sets SYMCOMM_ADDR (ncclGetUniqueId serves the root there: call it on one process)")
SC_PARAM(NCCL_HOSTID, "NCCL_HOSTID", STRING, NULL,
         "libnccl.so.2: a simulated host number 0..255, sets SYMCOMM_HOSTID (other values fail init)")
