/* What a device program's error means to the host: the result code a stream
 * that stopped on it reports. Shared by every backend (the sentence comes
 * from sc_dev_error_describe in device/program.h). */
#ifndef SC_BACKEND_DEV_RESULT_H
#define SC_BACKEND_DEV_RESULT_H

#include "device/program.h"
#include "util/error.h"

sc_result_t sc_backend_dev_result(const sc_dev_error_t *err);

#endif
