/* Data types and reduction operations. */
#include "core/comm.h"

static const struct {
  const char *name;
  size_t size;
} sc_dtypes[SYMCOMM_DTYPE_COUNT] = {
    [SYMCOMM_INT8] = {"int8", 1},       [SYMCOMM_UINT8] = {"uint8", 1},
    [SYMCOMM_INT32] = {"int32", 4},     [SYMCOMM_UINT32] = {"uint32", 4},
    [SYMCOMM_INT64] = {"int64", 8},     [SYMCOMM_UINT64] = {"uint64", 8},
    [SYMCOMM_FLOAT16] = {"float16", 2}, [SYMCOMM_BFLOAT16] = {"bfloat16", 2},
    [SYMCOMM_FLOAT32] = {"float32", 4}, [SYMCOMM_FLOAT64] = {"float64", 8},
};

symcomm_result_t symcomm_dtype_size(symcomm_dtype_t dtype, size_t *size) {
  sc_error_clear();
  if ((unsigned)dtype >= SYMCOMM_DTYPE_COUNT)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT, "unknown data type %d", (int)dtype);
  if (size == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT, "symcomm_dtype_size: size is NULL");
  *size = sc_dtypes[dtype].size;
  return SYMCOMM_OK;
}

const char *symcomm_dtype_string(symcomm_dtype_t dtype) {
  return (unsigned)dtype < SYMCOMM_DTYPE_COUNT ? sc_dtypes[dtype].name : "unknown";
}

const char *symcomm_op_string(symcomm_op_t op) {
  static const char *names[SYMCOMM_OP_COUNT] = {"sum", "prod", "min", "max", "avg"};
  return (unsigned)op < SYMCOMM_OP_COUNT ? names[op] : "unknown";
}
