/* Printing for symcomm-topo, written against the public API only. */
#ifndef SYMCOMM_TOPO_PRINT_H
#define SYMCOMM_TOPO_PRINT_H

#include <stdio.h>

#include "symcomm.h"

/* The link matrix of topo in the style of `nvidia-smi topo -m`, then its class. */
int print_topo_matrix(FILE *out, symcomm_topo_t topo, const char *indent);
/* The legend of the matrix cells. */
void print_topo_legend(FILE *out);
/* Every rank joins the job; rank 0 prints hosts, ranks, devices and links,
 * and writes host 0's topology to xml_path unless it is NULL. */
int print_job(FILE *out, const char *xml_path);
/* Every parameter with its value, default and doc; names only with names_only. */
int print_env(FILE *out, int names_only);
/* Prints the failed call and its sentence; returns 1 for main's exit status. */
int report_failure(const char *call, symcomm_result_t res, symcomm_comm_t comm);

#endif
