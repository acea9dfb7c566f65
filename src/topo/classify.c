/* The shape of the NVLink graph of one host (seed 002's detection), and the
 * text nvidia-smi shows for one link. */
#include <stdio.h>

#include "topo/topo.h"

#define SC_HCM_GPUS 8
#define SC_HCM_DEGREE 4

static bool sc_nvlinked(const sc_topo_t *t, int a, int b) {
  return t->link[a][b] == SYMCOMM_LINK_NVLINK || t->link[b][a] == SYMCOMM_LINK_NVLINK;
}

/* Whether the four GPUs whose bits are set in `mask` are all joined pairwise. */
static bool sc_is_clique(const sc_topo_t *t, unsigned mask) {
  for (int a = 0; a < SC_HCM_GPUS; a++)
    for (int b = a + 1; b < SC_HCM_GPUS; b++)
      if ((mask >> a & 1u) && (mask >> b & 1u) && !sc_nvlinked(t, a, b))
        return false;
  return true;
}

/* Two fully connected quads plus a perfect matching between them. With every
 * degree exactly 4, a quad is GPU 0 and three of its four neighbours; once both
 * quads are complete each GPU has exactly one link left, which must cross, so
 * the crossing links are a perfect matching by counting. Degrees alone are not
 * enough: the circulant graph C8(1,2) is 4-regular and has no such quads. */
static bool sc_is_hybrid_cube_mesh(const sc_topo_t *t) {
  if (t->ngpus != SC_HCM_GPUS)
    return false;
  int neighbours[SC_HCM_GPUS][SC_HCM_GPUS];
  int degree[SC_HCM_GPUS] = {0};
  for (int a = 0; a < SC_HCM_GPUS; a++)
    for (int b = 0; b < SC_HCM_GPUS; b++)
      if (a != b && sc_nvlinked(t, a, b))
        neighbours[a][degree[a]++] = b;
  for (int a = 0; a < SC_HCM_GPUS; a++)
    if (degree[a] != SC_HCM_DEGREE)
      return false;
  const unsigned all = (1u << SC_HCM_GPUS) - 1;
  for (int across = 0; across < SC_HCM_DEGREE; across++) {
    unsigned quad = 1u; /* GPU 0 */
    for (int k = 0; k < SC_HCM_DEGREE; k++)
      if (k != across)
        quad |= 1u << neighbours[0][k];
    if (sc_is_clique(t, quad) && sc_is_clique(t, all & ~quad))
      return true;
  }
  return false;
}

symcomm_topo_class_t sc_topo_classify(const sc_topo_t *topo) {
  if (topo == NULL || topo->ngpus < 1)
    return SYMCOMM_TOPO_NONE;
  int pairs = 0, linked = 0;
  for (int a = 0; a < topo->ngpus; a++) {
    for (int b = a + 1; b < topo->ngpus; b++) {
      pairs++;
      linked += sc_nvlinked(topo, a, b);
    }
  }
  if (linked == pairs) /* includes the single GPU */
    return SYMCOMM_TOPO_FULLY_CONNECTED;
  if (linked == 0)
    return SYMCOMM_TOPO_NONE;
  if (sc_is_hybrid_cube_mesh(topo))
    return SYMCOMM_TOPO_HYBRID_CUBE_MESH;
  return SYMCOMM_TOPO_PARTIAL;
}

void sc_topo_link_text(const sc_topo_t *topo, int a, int b, char *buf, size_t len) {
  static const char *const names[] = {
      [SYMCOMM_LINK_SELF] = "X",  [SYMCOMM_LINK_NVLINK] = "NV", [SYMCOMM_LINK_PIX] = "PIX",
      [SYMCOMM_LINK_PXB] = "PXB", [SYMCOMM_LINK_PHB] = "PHB",   [SYMCOMM_LINK_SYS] = "SYS",
      [SYMCOMM_LINK_NET] = "NET",
  };
  if (buf == NULL || len == 0)
    return;
  if (topo == NULL || a < 0 || b < 0 || a >= topo->ngpus || b >= topo->ngpus) {
    snprintf(buf, len, "?");
    return;
  }
  unsigned link = topo->link[a][b];
  if (link >= sizeof(names) / sizeof(names[0]))
    snprintf(buf, len, "?");
  else if (link == SYMCOMM_LINK_NVLINK)
    snprintf(buf, len, "NV%d", topo->nvlinks[a][b]);
  else
    snprintf(buf, len, "%s", names[link]);
}
