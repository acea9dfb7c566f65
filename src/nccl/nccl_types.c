/* NCCL's datatypes and reduction operators as symcomm's (the values differ:
 * ncclFloat32 is 7, SYMCOMM_FLOAT32 8; ncclMax is 2, SYMCOMM_MAX 3). What
 * symcomm cannot reduce (fp8) is refused, never reduced as something else;
 * it can still be moved, as bytes. */
#include <stdint.h>

#include "shim.h"

/* -1: no symcomm type reduces it. */
static const int shim_dtype_table[ncclNumTypes] = {
    [ncclInt8] = SYMCOMM_INT8,       [ncclUint8] = SYMCOMM_UINT8,
    [ncclInt32] = SYMCOMM_INT32,     [ncclUint32] = SYMCOMM_UINT32,
    [ncclInt64] = SYMCOMM_INT64,     [ncclUint64] = SYMCOMM_UINT64,
    [ncclFloat16] = SYMCOMM_FLOAT16, [ncclFloat32] = SYMCOMM_FLOAT32,
    [ncclFloat64] = SYMCOMM_FLOAT64, [ncclBfloat16] = SYMCOMM_BFLOAT16,
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
    [ncclFloat8e4m3] = -1,           [ncclFloat8e5m2] = -1,
#endif
};

static const symcomm_op_t shim_op_table[ncclNumOps] = {
    [ncclSum] = SYMCOMM_SUM, [ncclProd] = SYMCOMM_PROD, [ncclMax] = SYMCOMM_MAX,
    [ncclMin] = SYMCOMM_MIN, [ncclAvg] = SYMCOMM_AVG,
};

static ncclResult_t shim_dtype_check(ncclDataType_t t, const char *call) {
  if ((unsigned)t >= (unsigned)ncclNumTypes)
    return shim_fail(ncclInvalidArgument, "%s: datatype %d is not an ncclDataType_t (0..%d)", call,
                     (int)t, (int)ncclNumTypes - 1);
  return ncclSuccess;
}

ncclResult_t shim_move_type(ncclDataType_t t, const char *call, symcomm_dtype_t *out, size_t *elem) {
  ncclResult_t res = shim_dtype_check(t, call);
  if (res != ncclSuccess)
    return res;
  /* Moving data needs only its size: fp8 travels as bytes. */
  symcomm_dtype_t d = shim_dtype_table[t] < 0 ? SYMCOMM_UINT8 : (symcomm_dtype_t)shim_dtype_table[t];
  if (symcomm_dtype_size(d, elem) != SYMCOMM_OK)
    return shim_fail(ncclInternalError, "%s: no size for datatype %d", call, (int)t);
  *out = d;
  return ncclSuccess;
}

ncclResult_t shim_reduce_type(ncclDataType_t t, ncclRedOp_t op, const char *call,
                              symcomm_dtype_t *dtype, symcomm_op_t *sop, size_t *elem) {
  ncclResult_t res = shim_dtype_check(t, call);
  if (res != ncclSuccess)
    return res;
  if ((unsigned)op >= (unsigned)ncclNumOps)
    return shim_fail(ncclInvalidArgument,
                     "%s: operator %d is neither a built-in ncclRedOp_t (0..%d) nor one made by "
                     "ncclRedOpCreatePreMulSum (which symcomm does not make)",
                     call, (int)op, (int)ncclNumOps - 1);
  if (shim_dtype_table[t] < 0)
    return shim_fail(ncclInvalidUsage,
                     "%s: symcomm reduces no fp8 data (datatype %d); it only moves it (broadcast, "
                     "all-gather, all-to-all, send/recv)",
                     call, (int)t);
  *dtype = (symcomm_dtype_t)shim_dtype_table[t];
  *sop = shim_op_table[op];
  if (symcomm_dtype_size(*dtype, elem) != SYMCOMM_OK)
    return shim_fail(ncclInternalError, "%s: no size for datatype %d", call, (int)t);
  return ncclSuccess;
}

ncclResult_t shim_bytes(size_t count, size_t factor, size_t elem, const char *call, size_t *bytes) {
  if (factor != 0 && count > SIZE_MAX / factor / elem)
    return shim_fail(ncclInvalidArgument, "%s: %zu elements of %zu bytes (x %zu) pass SIZE_MAX",
                     call, count, elem, factor);
  *bytes = count * factor * elem;
  return ncclSuccess;
}

/* symcomm has no pre-multiplied sum: say so rather than make an operator
 * whose results would be plain sums. */
SHIM_API ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar,
                                               ncclDataType_t datatype,
                                               ncclScalarResidence_t residence, ncclComm_t comm) {
  ncclResult_t res = shim_comm_ready(comm, "ncclRedOpCreatePreMulSum");
  if (res != ncclSuccess)
    return res;
  return shim_fail(ncclInvalidUsage,
                   "ncclRedOpCreatePreMulSum: symcomm has no pre-multiplied sum; scale the "
                   "input, then reduce with ncclSum");
}
SHIM_PROFILED(ncclRedOpCreatePreMulSum);

SHIM_API ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  ncclResult_t res = shim_comm_ready(comm, "ncclRedOpDestroy");
  if (res != ncclSuccess)
    return res;
  return shim_fail(ncclInvalidArgument,
                   "ncclRedOpDestroy: operator %d was not made by ncclRedOpCreatePreMulSum", (int)op);
}
SHIM_PROFILED(ncclRedOpDestroy);
